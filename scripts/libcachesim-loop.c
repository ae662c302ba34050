// Times libCacheSim's eviction policies on an oracleGeneral stream held in
// memory: only the request loop is timed, as `sparseflash trace cachesim` does.
// Usage: libcachesim-loop FILE POLICIES SHARES [REPEAT]
//   POLICIES: comma-separated (lru,fifo,lfu,sieve,s3fifo,belady)
//   SHARES: comma-separated percentages of the working set (10,25,50)
//   REPEAT: runs of each policy and share; the median loop time counts (default 1)
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "libCacheSim.h"

typedef struct {
  uint64_t id;
  uint32_t size;
  int64_t next;
} rec_t;

static int cmp_u64(const void *a, const void *b) {
  uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
  return x < y ? -1 : x > y;
}

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

static double now_s(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec + t.tv_nsec * 1e-9;
}

static cache_t *make_cache(const char *name, common_cache_params_t p) {
  if (!strcmp(name, "lru")) return LRU_init(p, NULL);
  if (!strcmp(name, "fifo")) return FIFO_init(p, NULL);
  if (!strcmp(name, "lfu")) return LFU_init(p, NULL);
  if (!strcmp(name, "sieve")) return Sieve_init(p, NULL);
  if (!strcmp(name, "s3fifo")) return S3FIFO_init(p, NULL);
  if (!strcmp(name, "belady")) return Belady_init(p, NULL);
  fprintf(stderr, "unknown policy %s\n", name);
  exit(2);
}

int main(int argc, char **argv) {
  if (argc != 4 && argc != 5) {
    fprintf(stderr, "usage: %s FILE POLICIES SHARES [REPEAT]\n", argv[0]);
    return 2;
  }
  const int repeat = argc == 5 ? atoi(argv[4]) : 1;
  if (repeat < 1 || repeat > 1000) {
    fprintf(stderr, "REPEAT %s: give 1 to 1000\n", argv[4]);
    return 2;
  }
  FILE *f = fopen(argv[1], "rb");
  if (!f) { perror(argv[1]); return 1; }
  fseek(f, 0, SEEK_END);
  long bytes = ftell(f);
  fseek(f, 0, SEEK_SET);
  size_t n = (size_t)bytes / 24;
  rec_t *req = malloc(n * sizeof(rec_t));
  unsigned char buf[24];
  for (size_t i = 0; i < n; ++i) {
    if (fread(buf, 24, 1, f) != 1) { fprintf(stderr, "short read\n"); return 1; }
    memcpy(&req[i].id, buf + 4, 8);
    memcpy(&req[i].size, buf + 12, 4);
    memcpy(&req[i].next, buf + 16, 8);
    if (req[i].next == -1) req[i].next = INT64_MAX;
  }
  fclose(f);
  uint64_t *ids = malloc(n * sizeof(uint64_t));
  for (size_t i = 0; i < n; ++i) ids[i] = req[i].id;
  qsort(ids, n, sizeof(uint64_t), cmp_u64);
  size_t unique = n ? 1 : 0;
  for (size_t i = 1; i < n; ++i) unique += ids[i] != ids[i - 1];
  free(ids);
  const int64_t working_set = (int64_t)unique * req[0].size;
  fprintf(stderr, "%s: %zu requests, %zu objects, working set %lld bytes\n", argv[1], n, unique,
          (long long)working_set);
  printf("%-8s %8s %16s %12s %12s %10s %10s\n", "policy", "size", "bytes", "requests", "misses",
         "miss_ratio", "Mreq/s");
  char shares[256];
  snprintf(shares, sizeof(shares), "%s", argv[3]);
  for (char *s = strtok(shares, ","); s; s = strtok(NULL, ",")) {
    double share = atof(s);
    int64_t cache_bytes = (int64_t)(share / 100 * (double)working_set);
    char policies[256];
    snprintf(policies, sizeof(policies), "%s", argv[2]);
    char *save = NULL;
    for (char *p = strtok_r(policies, ",", &save); p; p = strtok_r(NULL, ",", &save)) {
      double secs[1000];
      uint64_t misses = 0;
      for (int k = 0; k < repeat; ++k) {
        common_cache_params_t params = default_common_cache_params();
        params.cache_size = cache_bytes;
        params.hashpower = 24;
        cache_t *cache = make_cache(p, params);
        request_t *r = new_request();
        misses = 0;
        double start = now_s();
        for (size_t i = 0; i < n; ++i) {
          r->obj_id = req[i].id;
          r->obj_size = req[i].size;
          r->next_access_vtime = req[i].next;
          r->clock_time = 0;
          if (!cache->get(cache, r)) ++misses;
        }
        secs[k] = now_s() - start;
        free_request(r);
        cache->cache_free(cache);
      }
      qsort(secs, repeat, sizeof(double), cmp_double);
      double secs_median = secs[repeat / 2];
      printf("%-8s %7s%% %16lld %12zu %12llu %10.6f %10.2f\n", p, s, (long long)cache_bytes, n,
             (unsigned long long)misses, (double)misses / n, n / secs_median / 1e6);
      fflush(stdout);
    }
  }
  free(req);
  return 0;
}
