// cuBLAS, opened with dlopen on first use (the GEMM probe of `calibrate`, the index projection
// of `--measure`): linked, cuBLAS and cuBLASLt (~600 MB of shared objects) are mapped and
// relocated at every start of cisa-sim (~200 MB resident even for `presets`).
#pragma once

#include <cublas_v2.h>  // types only

namespace cisa::gpu {

struct Cublas {
  decltype(&cublasCreate_v2) create = nullptr;
  decltype(&cublasDestroy_v2) destroy = nullptr;
  // The C entry point (the header adds C++ overloads, so decltype(&cublasGemmEx) is ambiguous).
  cublasStatus_t (*gemm)(cublasHandle_t, cublasOperation_t, cublasOperation_t, int, int, int, const void*,
                         const void*, cudaDataType, int, const void*, cudaDataType, int, const void*, void*,
                         cudaDataType, int, cublasComputeType_t, cublasGemmAlgo_t) = nullptr;
};

// The loaded library; throws std::runtime_error naming libcublas.so.N and what to do when it is missing.
const Cublas& cublas();

}  // namespace cisa::gpu
