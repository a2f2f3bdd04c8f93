#include "gpu/cublas_loader.hpp"

#include <dlfcn.h>

#include <stdexcept>
#include <string>
#include <vector>

namespace cisa::gpu {

#define CISA_STR2(x) #x
#define CISA_STR(x) CISA_STR2(x)

const Cublas& cublas() {
  static const Cublas lib = [] {
    const std::string so = "libcublas.so." CISA_STR(CUBLAS_VER_MAJOR);
    std::vector<std::string> tried = {so};
#ifdef CISA_CUDA_LIBRARY_DIR
    tried.push_back(std::string(CISA_CUDA_LIBRARY_DIR) + "/" + so);
#endif
    void* h = nullptr;
    std::string why;
    for (const auto& name : tried) {
      h = ::dlopen(name.c_str(), RTLD_NOW | RTLD_LOCAL);
      if (h) break;
      const char* e = ::dlerror();
      why += std::string(why.empty() ? "" : "; ") + (e ? e : name + ": not found");
    }
    if (!h)
      throw std::runtime_error("cuBLAS (" + so + ", CUDA " CISA_STR(CUBLAS_VER_MAJOR) +
                               ".x, for the GEMM probe of calibrate and the index projection of --measure) could not be loaded: " + why +
                               " (install cuBLAS or add its folder to LD_LIBRARY_PATH)");
    Cublas c;
    c.create = reinterpret_cast<decltype(c.create)>(::dlsym(h, "cublasCreate_v2"));
    c.destroy = reinterpret_cast<decltype(c.destroy)>(::dlsym(h, "cublasDestroy_v2"));
    c.gemm = reinterpret_cast<decltype(c.gemm)>(::dlsym(h, "cublasGemmEx"));
    if (!c.create || !c.destroy || !c.gemm)
      throw std::runtime_error(so + " lacks cublasCreate_v2 / cublasDestroy_v2 / cublasGemmEx");
    return c;
  }();
  return lib;
}


}  // namespace cisa::gpu
