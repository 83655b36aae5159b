// SHA-256 as FIPS 180-4 section 6.2 states it: the message padded to whole
// 64-byte blocks (a 1 bit, zeros, its length in bits as 64 big-endian bits),
// each block mixed into eight 32-bit words by 64 rounds.
#include "sha256.h"

#include <string.h>

#include "threads.h"

// The first 32 bits of the fractional parts of the cube roots of the first 64 primes (4.2.2).
static const uint32_t K[64] = {
    0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5,
    0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174,
    0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
    0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967,
    0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85,
    0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
    0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
    0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2,
};

static inline uint32_t rotr(uint32_t x, int n) { return (x >> n) | (x << (32 - n)); }

static inline uint32_t load_be32(const uint8_t *p) {
  return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | (uint32_t)p[3];
}

// The functions of 4.1.2.
#define SIGMA0(x) (rotr(x, 2) ^ rotr(x, 13) ^ rotr(x, 22))
#define SIGMA1(x) (rotr(x, 6) ^ rotr(x, 11) ^ rotr(x, 25))
#define sigma0(x) (rotr(x, 7) ^ rotr(x, 18) ^ ((x) >> 3))
#define sigma1(x) (rotr(x, 17) ^ rotr(x, 19) ^ ((x) >> 10))
// Round t with message word w: T1 and T2 of 6.2.2 step 3, Ch(e, f, g) and
// Maj(a, b, c) in fewer operations. Instead of moving every word down a
// place, the next round names them one place over (h is the new a, d the
// new e).
#define ROUND(a, b, c, d, e, f, g, h, t, w)                         \
  do {                                                              \
    uint32_t T1 = h + SIGMA1(e) + (g ^ (e & (f ^ g))) + K[t] + (w); \
    h = T1 + SIGMA0(a) + ((a & b) | (c & (a | b)));                 \
    d += T1;                                                        \
  } while (0)

// One 64-byte block into the state H (6.2.2), eight rounds a turn, the
// message schedule kept as its last 16 words (W[t] replaces W[t - 16]).
// Not inlined into the loop over blocks: a function called once a block is
// optimized by the JS engine's top tier within the first blocks, where one
// long loop would run all of a model's weights in its baseline code.
__attribute__((noinline)) static void compress(uint32_t H[8], const uint8_t *block) {
  uint32_t W[16];
  uint32_t a = H[0], b = H[1], c = H[2], d = H[3], e = H[4], f = H[5], g = H[6], h = H[7];
  for (int t = 0; t < 64; t += 8) {
    if (t < 16) {
      for (int i = 0; i < 8; i++) W[t + i] = load_be32(block + 4 * (t + i));
    } else {
      for (int i = 0; i < 8; i++) {
        int j = (t + i) & 15;
        W[j] += sigma0(W[(j + 1) & 15]) + W[(j + 9) & 15] + sigma1(W[(j + 14) & 15]);
      }
    }
    int j = t & 15;
    ROUND(a, b, c, d, e, f, g, h, t + 0, W[j + 0]);
    ROUND(h, a, b, c, d, e, f, g, t + 1, W[j + 1]);
    ROUND(g, h, a, b, c, d, e, f, t + 2, W[j + 2]);
    ROUND(f, g, h, a, b, c, d, e, t + 3, W[j + 3]);
    ROUND(e, f, g, h, a, b, c, d, t + 4, W[j + 4]);
    ROUND(d, e, f, g, h, a, b, c, t + 5, W[j + 5]);
    ROUND(c, d, e, f, g, h, a, b, t + 6, W[j + 6]);
    ROUND(b, c, d, e, f, g, h, a, t + 7, W[j + 7]);
  }
  H[0] += a, H[1] += b, H[2] += c, H[3] += d, H[4] += e, H[5] += f, H[6] += g, H[7] += h;
}

RMT_API void rmt_sha256(const uint8_t *data, size_t size, uint8_t *digest) {
  // The initial hash value (5.3.3): square roots of the first 8 primes.
  uint32_t H[8] = {0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a, 0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19};
  size_t whole = size / 64 * 64;
  for (size_t i = 0; i < whole; i += 64) compress(H, data + i);
  // The rest, the 0x80 byte and the length: one block, or two when fewer
  // than 9 bytes are left for the last two.
  uint8_t tail[128] = {0};
  size_t rest = size - whole, tail_bytes = rest < 56 ? 64 : 128;
  if (rest) memcpy(tail, data + whole, rest);
  tail[rest] = 0x80;
  uint64_t bits = (uint64_t)size * 8;
  for (int i = 0; i < 8; i++) tail[tail_bytes - 1 - i] = (uint8_t)(bits >> (8 * i));
  for (size_t i = 0; i < tail_bytes; i += 64) compress(H, tail + i);
  for (int i = 0; i < 8; i++) {
    digest[4 * i] = (uint8_t)(H[i] >> 24), digest[4 * i + 1] = (uint8_t)(H[i] >> 16);
    digest[4 * i + 2] = (uint8_t)(H[i] >> 8), digest[4 * i + 3] = (uint8_t)H[i];
  }
}

// The one digest rmt_sha256_start may have under way.
static struct {
  const uint8_t *data;
  size_t size;
  uint8_t *digest;
} pending;

static void sha256_item(void *ctx, int begin, int end, int thread) {
  (void)ctx, (void)begin, (void)end, (void)thread;
  rmt_sha256(pending.data, pending.size, pending.digest);
}

RMT_API void rmt_sha256_start(const uint8_t *data, size_t size, uint8_t *digest) {
  rmt_parallel_join();  // the previous one reads `pending` until it is done
  pending.data = data, pending.size = size, pending.digest = digest;
  rmt_parallel_post(1, sha256_item, NULL);
}

RMT_API void rmt_sha256_wait(void) { rmt_parallel_join(); }
