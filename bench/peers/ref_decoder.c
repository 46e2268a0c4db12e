// A reference GPT-2-style decoder in plain C, the shapes of sleuth's local model (pre-norm, causal
// attention, GELU MLP, learned positions, tied output layer), for bench/local.ts: how fast the same
// arithmetic runs compiled natively (cc -O3 -march=native -ffast-math, one thread).
//  - forward: every row of a T-token sequence, logits on every row (what computeLogprobs and a
//    training forward pass do);
//  - decode: a P-token prompt, then N tokens one at a time with a KV cache, logits per token (what
//    the sampler does).
// Weights are random: speed does not depend on them. Prints one JSON line.
// usage: ref_decoder D LAYERS HEADS VOCAB T P N
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static int D, L, NH, V, S;
static float *wte, *wpe, *lnw, *lnb, *wqkv, *bqkv, *wo, *bo, *w1, *b1, *w2, *b2;
static float *x, *xn, *qkv, *att, *y, *h, *logits, *kcache, *vcache;

static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec + t.tv_nsec * 1e-9;
}

static float *randn(size_t n, float scale) {
  float *p = malloc(n * sizeof(float));
  for (size_t i = 0; i < n; i++) p[i] = scale * ((float)rand() / RAND_MAX - 0.5f);
  return p;
}

// out[t,o] = b[o] + sum_c in[t,c] w[o,c]
static void matmul(float *out, const float *in, const float *w, const float *b, int T, int C, int OC) {
  for (int t = 0; t < T; t++)
    for (int o = 0; o < OC; o++) {
      float s = b ? b[o] : 0.0f;
      const float *a = in + (size_t)t * C, *ww = w + (size_t)o * C;
      for (int c = 0; c < C; c++) s += a[c] * ww[c];
      out[(size_t)t * OC + o] = s;
    }
}

static void layernorm(float *out, const float *in, const float *w, const float *b, int T, int C) {
  for (int t = 0; t < T; t++) {
    const float *a = in + (size_t)t * C;
    float m = 0, v = 0;
    for (int c = 0; c < C; c++) m += a[c];
    m /= C;
    for (int c = 0; c < C; c++) v += (a[c] - m) * (a[c] - m);
    float r = 1.0f / sqrtf(v / C + 1e-5f);
    for (int c = 0; c < C; c++) out[(size_t)t * C + c] = (a[c] - m) * r * w[c] + b[c];
  }
}

// Rows t0..t0+T-1 of layer l; keys and values of rows before t0 come from the cache.
static void block(int l, int t0, int T) {
  int hs = D / NH;
  float scale = 1.0f / sqrtf((float)hs);
  layernorm(xn, x, lnw + (size_t)(2 * l) * D, lnb + (size_t)(2 * l) * D, T, D);
  matmul(qkv, xn, wqkv + (size_t)l * 3 * D * D, bqkv + (size_t)l * 3 * D, T, D, 3 * D);
  float *K = kcache + (size_t)l * S * D, *Vc = vcache + (size_t)l * S * D;
  for (int t = 0; t < T; t++) {
    memcpy(K + (size_t)(t0 + t) * D, qkv + (size_t)t * 3 * D + D, D * sizeof(float));
    memcpy(Vc + (size_t)(t0 + t) * D, qkv + (size_t)t * 3 * D + 2 * D, D * sizeof(float));
  }
  for (int t = 0; t < T; t++)
    for (int hh = 0; hh < NH; hh++) {
      const float *q = qkv + (size_t)t * 3 * D + hh * hs;
      int n = t0 + t + 1;
      float mx = -1e30f, sum = 0;
      for (int j = 0; j < n; j++) {
        float s = 0;
        const float *k = K + (size_t)j * D + hh * hs;
        for (int i = 0; i < hs; i++) s += q[i] * k[i];
        att[j] = s * scale;
        if (att[j] > mx) mx = att[j];
      }
      for (int j = 0; j < n; j++) sum += (att[j] = expf(att[j] - mx));
      float *o = y + (size_t)t * D + hh * hs;
      for (int i = 0; i < hs; i++) o[i] = 0;
      for (int j = 0; j < n; j++) {
        float p = att[j] / sum;
        const float *v = Vc + (size_t)j * D + hh * hs;
        for (int i = 0; i < hs; i++) o[i] += p * v[i];
      }
    }
  matmul(xn, y, wo + (size_t)l * D * D, bo + (size_t)l * D, T, D, D);
  for (size_t i = 0; i < (size_t)T * D; i++) x[i] += xn[i];
  layernorm(xn, x, lnw + (size_t)(2 * l + 1) * D, lnb + (size_t)(2 * l + 1) * D, T, D);
  matmul(h, xn, w1 + (size_t)l * 4 * D * D, b1 + (size_t)l * 4 * D, T, D, 4 * D);
  for (size_t i = 0; i < (size_t)T * 4 * D; i++) {
    float u = h[i];
    h[i] = 0.5f * u * (1.0f + tanhf(0.7978845608f * (u + 0.044715f * u * u * u)));
  }
  matmul(xn, h, w2 + (size_t)l * D * 4 * D, b2 + (size_t)l * D, T, 4 * D, D);
  for (size_t i = 0; i < (size_t)T * D; i++) x[i] += xn[i];
}

// Rows t0..t0+T-1 of the tokens; returns the argmax of the last row's logits.
static int forward(const int *tokens, int t0, int T) {
  for (int t = 0; t < T; t++)
    for (int c = 0; c < D; c++) x[(size_t)t * D + c] = wte[(size_t)tokens[t] * D + c] + wpe[(size_t)(t0 + t) * D + c];
  for (int l = 0; l < L; l++) block(l, t0, T);
  layernorm(xn, x, lnw + (size_t)(2 * L) * D, lnb + (size_t)(2 * L) * D, T, D);
  matmul(logits, xn, wte, NULL, T, D, V);
  int best = 0;
  const float *last = logits + (size_t)(T - 1) * V;
  for (int v = 1; v < V; v++)
    if (last[v] > last[best]) best = v;
  return best;
}

int main(int argc, char **argv) {
  if (argc != 8) {
    fprintf(stderr, "usage: ref_decoder D LAYERS HEADS VOCAB T P N\n");
    return 2;
  }
  D = atoi(argv[1]), L = atoi(argv[2]), NH = atoi(argv[3]), V = atoi(argv[4]);
  int T = atoi(argv[5]), P = atoi(argv[6]), N = atoi(argv[7]);
  S = T > P + N ? T : P + N;
  srand(1);
  wte = randn((size_t)V * D, 0.04f), wpe = randn((size_t)S * D, 0.02f);
  lnw = randn((size_t)(2 * L + 1) * D, 0.1f), lnb = randn((size_t)(2 * L + 1) * D, 0.1f);
  for (int i = 0; i < (2 * L + 1) * D; i++) lnw[i] += 1.0f;
  wqkv = randn((size_t)L * 3 * D * D, 0.04f), bqkv = randn((size_t)L * 3 * D, 0.01f);
  wo = randn((size_t)L * D * D, 0.04f), bo = randn((size_t)L * D, 0.01f);
  w1 = randn((size_t)L * 4 * D * D, 0.04f), b1 = randn((size_t)L * 4 * D, 0.01f);
  w2 = randn((size_t)L * 4 * D * D, 0.04f), b2 = randn((size_t)L * D, 0.01f);
  x = malloc((size_t)S * D * 4), xn = malloc((size_t)S * D * 4), qkv = malloc((size_t)S * 3 * D * 4), att = malloc((size_t)S * 4);
  y = malloc((size_t)S * D * 4), h = malloc((size_t)S * 4 * D * 4), logits = malloc((size_t)S * V * 4);
  kcache = malloc((size_t)L * S * D * 4), vcache = malloc((size_t)L * S * D * 4);
  int *tokens = malloc((size_t)S * sizeof(int));
  for (int i = 0; i < S; i++) tokens[i] = rand() % V;

  // Whole-sequence forward, logits on every row: best of 3.
  double fwd = 1e30;
  for (int r = 0; r < 3; r++) {
    double t0 = now();
    forward(tokens, 0, T);
    double dt = now() - t0;
    if (dt < fwd) fwd = dt;
  }
  // Prompt, then N tokens one at a time: best of 3 of the N decode steps.
  double dec = 1e30;
  int check = 0;
  for (int r = 0; r < 3; r++) {
    int next = forward(tokens, 0, P);
    double t0 = now();
    for (int i = 0; i < N; i++) {
      int tok = next;
      next = forward(&tok, P + i, 1);
    }
    double dt = now() - t0;
    if (dt < dec) dec = dt;
    check += next;
  }
  printf("{\"forward_tokens_per_s\": %.1f, \"decode_tokens_per_s\": %.1f, \"T\": %d, \"prompt\": %d, \"decoded\": %d, \"check\": %d}\n", T / fwd, N / dec, T, P, N, check);
  return 0;
}
