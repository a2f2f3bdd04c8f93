#include <cstdio>
#include <vector>
#include <algorithm>
#include <set>
#include "cisa_kernels/cisa_step.hpp"
using namespace cisa::kernels;
int main() {
  struct S { int kv, B, hist, P, G, W, K; };
  std::vector<S> v = {{1,16,1048576,512,4,128,4096},{2,8,1048576,512,4,128,4096},{4,4,1048576,512,4,128,4096},{8,2,1048576,512,4,128,4096},{1,16,159296,448,8,200,3200},{6,16,159296,448,8,200,3200},
    {6,16,159296,448,29,200,3200},{1,2,997568,1856,29,200,2624},{6,2,997568,1856,29,200,2624},{6,2,997568,1856,8,200,2624},
    {2,5,343104,960,13,72,2240},{2,8,605504,704,2,72,1088},{1,10,220864,320,5,144,1472},{1,3,834176,1408,23,144,4736}};
  printf("kv B hist P G W K | rows groups max_rows stride stride%%16 | reps_per_group_MB reps_unique_MB keys_MB\n");
  for (auto s : v) {
    StepBatch b{std::vector<int>(s.B, s.hist), std::vector<int>(s.B, s.P), s.kv, 4};
    CisaPlan p = plan_cisa_step(b, StepConfig{s.W, s.K, s.G});
    double rg = 0, ne = 0; int mr = 0; std::set<std::pair<int,int>> u; double ru = 0;
    for (auto& g : p.score_groups) { rg += g.max_ne * 256.0; mr = std::max(mr, g.n_rows); if (u.insert({g.seq, g.kv_head}).second) ru += g.max_ne * 256.0; }
    for (auto& r : p.score_rows) ne += r.n_e;
    printf("%d %d %d %d %d %d %d | %zu %zu %d %d %d | %.1f %.1f %.1f\n", s.kv, s.B, s.hist, s.P, s.G, s.W, s.K, p.score_rows.size(),
           p.score_groups.size(), mr, p.score_stride, p.score_stride % 16, rg / 1e6, ru / 1e6, ne * 2 / 1e6);
  }
}
