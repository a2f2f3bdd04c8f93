// Estimated fp32 FMA peak of this CPU: cores x clock x FMA lanes per cycle x 2 FLOP.
//   cores:  std::thread::hardware_concurrency() (logical CPUs this process may use)
//   clock:  cpuinfo_max_freq from sysfs when present, else the largest "cpu MHz" in
//           /proc/cpuinfo (on VMs this is the nominal/TSC clock; turbo is not counted)
//   lanes:  from the instruction set this file was compiled for: AVX-512F 16 fp32 lanes,
//           AVX2+FMA 8 lanes, else SSE 4 lanes (mul+add counted as one FMA); times the number of
//           FMA pipes: 2, except AVX-512 on AMD (Zen 4 executes 512-bit FMAs on its two
//           256-bit pipes, i.e. 16 fp32 FMA/cycle per core).
#include <algorithm>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>

#include "route/route.hpp"

namespace cisa::route {

double cpu_fma_peak_gflops(std::string* how) {
  const unsigned cores = std::max(1u, std::thread::hardware_concurrency());
  double mhz = 0;
  std::string clock_src = "default 2000 MHz (no clock found)";
  {
    std::ifstream f("/sys/devices/system/cpu/cpu0/cpufreq/cpuinfo_max_freq");
    double khz = 0;
    if (f >> khz && khz > 0) {
      mhz = khz / 1000.0;
      clock_src = "sysfs cpuinfo_max_freq";
    }
  }
  std::string vendor;
  {
    std::ifstream f("/proc/cpuinfo");
    std::string line;
    double best = 0;
    while (std::getline(f, line)) {
      if (line.rfind("vendor_id", 0) == 0 && vendor.empty())
        vendor = line.substr(line.find(':') + 2);
      if (line.rfind("cpu MHz", 0) == 0) best = std::max(best, std::stod(line.substr(line.find(':') + 1)));
    }
    if (mhz <= 0 && best > 0) {
      mhz = best;
      clock_src = "/proc/cpuinfo cpu MHz";
    }
  }
  if (mhz <= 0) mhz = 2000;
  int lanes = 4, pipes = 2;
  std::string isa = "SSE";
#if defined(__AVX512F__)
  lanes = 16;
  isa = "AVX-512";
  pipes = vendor == "AuthenticAMD" ? 1 : 2;
#elif defined(__AVX2__) && defined(__FMA__)
  lanes = 8;
  isa = "AVX2+FMA";
#endif
  const double gflops = cores * (mhz / 1000.0) * lanes * pipes * 2.0;
  if (how) {
    std::ostringstream s;
    s << cores << " cores x " << mhz / 1000.0 << " GHz (" << clock_src << ") x " << lanes
      << " fp32 lanes (" << isa << ", compiled) x " << pipes << " FMA pipe(s)"
      << (vendor.empty() ? "" : " [" + vendor + "]") << " x 2 FLOP/FMA";
    *how = s.str();
  }
  return gflops;
}

}  // namespace cisa::route
