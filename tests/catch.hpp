// Catch2 v2 (Debian) and v3 (the GPU machine) behind one include.
#pragma once
#if __has_include(<catch2/catch_all.hpp>)
#include <catch2/catch_all.hpp>
#define CISA_CATCH_V3 1
using Catch::Approx;  // v2 has it in the global namespace
#else
#include <catch2/catch.hpp>
#endif
