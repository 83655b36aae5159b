"""The model card's tables (README.md) from train.py's eval.json and
build_data.py's stats.json: per language, the strings available for
training (gettext / descriptions / fortunes / everyday: everyday_sources.py's), the held-out sentences and the
int8 model's accuracy on them whole and at 1-3 words (with the prior, as the
LanguageDetector runs it); then the held-out fortunes'.

  python3 models/langid_card_table.py [EVAL_JSON] [STATS_JSON]
"""
import json
import os
import sys

from .. import paths



def main():
    eval_path = sys.argv[1] if len(sys.argv) > 1 else os.path.join(paths.LANGID, "eval.json")
    stats_path = sys.argv[2] if len(sys.argv) > 2 else "/work/scratch/langid/stats.json"
    with open(eval_path, encoding="utf-8") as f:
        report = json.load(f)
    with open(stats_path, encoding="utf-8") as f:
        stats = json.load(f)["languages"]
    pct = lambda x: "%.1f" % (100 * x)  # noqa: E731
    whole, short = report["int8"]["sentences"]["per_language"], report["int8"]["short"]["per_language"]
    everyday = report.get("everyday_training", {})
    print("| language | strings available for training (gettext / descriptions / fortunes / everyday) | held-out sentences | sentences % | 1-3 words % |")
    print("| --- | ---: | ---: | ---: | ---: |")
    for lang in report["languages"]:
        counts = dict(stats[lang], **{"everyday-train": everyday.get(lang, 0)})
        available = " / ".join(str(counts.get(source + "-train", 0)) for source in ("gettext", "descriptions", "fortunes", "everyday"))
        print("| %s | %s | %d | %s | %s |" % (lang, available, report["test_sentences"][lang], pct(whole[lang]), pct(short[lang])))
    print()
    lit = report["int8_literary"]
    print("| language | held-out fortunes | sentences % | 1-3 words % |")
    print("| --- | ---: | ---: | ---: |")
    for lang, n in sorted(report["literary_sentences"].items()):
        print("| %s | %d | %s | %s |" % (lang, n, pct(lit["sentences"]["per_language"][lang]), pct(lit["short"]["per_language"][lang])))
    means = [sum(d.values()) / len(d) for d in (whole, short)]
    print("\npooled: %s / %s; mean of the languages: %s / %s" % (
        pct(report["int8"]["sentences"]["accuracy"]), pct(report["int8"]["short"]["accuracy"]), pct(means[0]), pct(means[1])))


if __name__ == "__main__":
    main()
