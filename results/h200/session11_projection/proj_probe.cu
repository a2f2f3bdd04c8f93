// Standalone probe (session 11): the index projection's cuBLAS GEMM (m = kv*128, n = tokens,
// k = hidden; column-major out[m x n] = W[m x k] * X[k x n]) over a grid of shapes, timed
// (a) after a 256 MB L2-flush memset, as the measure path does, and (b) queued behind a spin kernel
// after the flush (host submission ahead of the GPU). Prints CSV.
#include <cublas_v2.h>
#include <cuda_bf16.h>
#include <cuda_runtime.h>
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <vector>
#define CK(x) do { auto e_ = (x); if (e_ != 0) { printf("err %d at %s:%d\n", (int)e_, __FILE__, __LINE__); exit(1);} } while (0)
__global__ void spin(long long c) { long long t = clock64(); while (clock64() - t < c) {} }
__global__ void fillb(__nv_bfloat16* p, size_t n, unsigned s) {
  for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x) {
    unsigned x = (unsigned)i * 0x9E3779B1u ^ s; x ^= x >> 15; x *= 0x2C1B3C6Du; x ^= x >> 12;
    p[i] = __float2bfloat16((float)(x & 0xFFFF) / 32768.f - 1.f);
  }
}
int main(int argc, char** argv) {
  int once = argc > 1;  // ncu mode: each shape once
  cublasHandle_t h; CK(cublasCreate(&h));
  size_t maxk = 8192, maxn = 65536, maxm = 1024;
  __nv_bfloat16 *W, *X, *O; unsigned char* fl;
  CK(cudaMalloc(&W, maxm * maxk * 2)); CK(cudaMalloc(&X, maxk * maxn * 2)); CK(cudaMalloc(&O, maxm * maxn * 2));
  CK(cudaMalloc(&fl, 256 << 20));
  fillb<<<528, 256>>>(W, maxm * maxk, 3); fillb<<<528, 256>>>(X, maxk * maxn, 5);
  cudaEvent_t a, b; cudaEventCreate(&a); cudaEventCreate(&b);
  int ms_[] = {128, 256, 384, 512, 1024};
  int ks[] = {2688, 4096, 8192};
  int ns[] = {512, 1024, 2048, 4096, 6144, 8192, 12288, 16384, 24576, 32768, 49152, 65536};
  printf("m,n,k,bytes,flops,ms_flush,ms_queued,ms_min_queued,tbs_queued\n");
  float one = 1, zero = 0;
  for (int m : ms_) for (int k : ks) for (int n : ns) {
    auto gemm = [&]() { CK(cublasGemmEx(h, CUBLAS_OP_N, CUBLAS_OP_N, m, n, k, &one, W, CUDA_R_16BF, m, X, CUDA_R_16BF, k, &zero, O, CUDA_R_16BF, m, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT)); };
    if (once) { gemm(); CK(cudaDeviceSynchronize()); continue; }
    gemm(); gemm(); CK(cudaDeviceSynchronize());
    std::vector<float> tf, tq;
    for (int r = 0; r < 9; ++r) {
      for (int mode = 0; mode < 2; ++mode) {
        CK(cudaMemsetAsync(fl, r & 0xff, 256 << 20));
        if (mode == 1) spin<<<1, 32>>>(100000);
        cudaEventRecord(a); gemm(); cudaEventRecord(b); CK(cudaEventSynchronize(b));
        float t; cudaEventElapsedTime(&t, a, b); (mode ? tq : tf).push_back(t);
      }
    }
    std::sort(tf.begin(), tf.end()); std::sort(tq.begin(), tq.end());
    double bytes = 2.0 * ((double)m * k + (double)k * n + (double)m * n), fl2 = 2.0 * m * (double)n * k;
    printf("%d,%d,%d,%.0f,%.0f,%.5f,%.5f,%.5f,%.3f\n", m, n, k, bytes, fl2, tf[4], tq[4], tq[0], bytes / (tq[4] * 1e-3) / 1e12);
  }
  return 0;
}
