// Writes icon-192.png and icon-512.png (the same picture as icon.svg, without
// the rounded corners so that it works as a maskable icon). node web/icons/make-icons.js
import { deflateSync } from 'node:zlib';
import { writeFileSync } from 'node:fs';

const CRC_TABLE = Array.from({ length: 256 }, (_, n) => {
  let c = n;
  for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
  return c >>> 0;
});
function crc32(bytes) {
  let c = 0xffffffff;
  for (const b of bytes) c = CRC_TABLE[(c ^ b) & 0xff] ^ (c >>> 8);
  return (c ^ 0xffffffff) >>> 0;
}
function chunk(type, data) {
  const out = Buffer.alloc(12 + data.length);
  out.writeUInt32BE(data.length, 0);
  out.write(type, 4, 'latin1');
  data.copy(out, 8);
  out.writeUInt32BE(crc32(out.subarray(4, 8 + data.length)), 8 + data.length);
  return out;
}
const hex = (h) => [1, 3, 5].map((i) => parseInt(h.slice(i, i + 2), 16));
// Shapes in the 64x64 units of icon.svg, painted in order.
const SHAPES = [
  ['#1d4ed8', 0, 0, 64, 64],
  ['#ffffff', 10, 12, 28, 22], ['#93c5fd', 26, 28, 28, 22],
  ['#1d4ed8', 14.5, 18.5, 19, 3], ['#1d4ed8', 14.5, 24.5, 13, 3],
  ['#1e3a8a', 30.5, 34.5, 19, 3], ['#1e3a8a', 30.5, 40.5, 13, 3],
];
function png(size) {
  const rows = Buffer.alloc(size * (size * 3 + 1));
  for (let y = 0; y < size; y++) {
    rows[y * (size * 3 + 1)] = 0;
    for (let x = 0; x < size; x++) {
      const u = ((x + 0.5) / size) * 64, v = ((y + 0.5) / size) * 64;
      let color = SHAPES[0][0];
      for (const [c, sx, sy, w, h] of SHAPES) if (u >= sx && u < sx + w && v >= sy && v < sy + h) color = c;
      rows.set(hex(color), y * (size * 3 + 1) + 1 + x * 3);
    }
  }
  const header = Buffer.alloc(13);
  header.writeUInt32BE(size, 0);
  header.writeUInt32BE(size, 4);
  header.set([8, 2, 0, 0, 0], 8); // 8-bit RGB
  return Buffer.concat([Buffer.from([137, 80, 78, 71, 13, 10, 26, 10]), chunk('IHDR', header),
    chunk('IDAT', deflateSync(rows, { level: 9 })), chunk('IEND', Buffer.alloc(0))]);
}
for (const size of [192, 512]) writeFileSync(new URL(`icon-${size}.png`, import.meta.url), png(size));
