"""Book lists and the corpus splits (whole books).

Names are the English book names diatheke prints in verse references for
both modules (spaRV1909eb and engWEB2015eb).
"""

CANON = [
    "Genesis", "Exodus", "Leviticus", "Numbers", "Deuteronomy", "Joshua",
    "Judges", "Ruth", "I Samuel", "II Samuel", "I Kings", "II Kings",
    "I Chronicles", "II Chronicles", "Ezra", "Nehemiah", "Esther", "Job",
    "Psalms", "Proverbs", "Ecclesiastes", "Song of Solomon", "Isaiah",
    "Jeremiah", "Lamentations", "Ezekiel", "Daniel", "Hosea", "Joel", "Amos",
    "Obadiah", "Jonah", "Micah", "Nahum", "Habakkuk", "Zephaniah", "Haggai",
    "Zechariah", "Malachi",
    "Matthew", "Mark", "Luke", "John", "Acts", "Romans", "I Corinthians",
    "II Corinthians", "Galatians", "Ephesians", "Philippians", "Colossians",
    "I Thessalonians", "II Thessalonians", "I Timothy", "II Timothy", "Titus",
    "Philemon", "Hebrews", "James", "I Peter", "II Peter", "I John",
    "II John", "III John", "Jude", "Revelation of John",
]

VALID = ["Ruth"]
TEST = ["Joel", "Jonah", "Titus", "Philemon"]
# Never used for training, tuning or evaluation; absent from every file.
RESERVED = ["Lamentations", "Obadiah", "Nahum", "Habakkuk", "Zephaniah",
            "Haggai", "II John", "III John", "Jude"]


def split_of(book):
    """'train' | 'valid' | 'test' | None (reserved or not canonical)."""
    if book in RESERVED or book not in CANON:
        return None
    if book in VALID:
        return "valid"
    if book in TEST:
        return "test"
    return "train"
