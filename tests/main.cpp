// Catch2 runner for every test executable. libsystemc.so expects an sc_main;
// tests that simulate call sim::reset_kernel() and sc_start() themselves.
#define CATCH_CONFIG_RUNNER
#include <catch2/catch.hpp>
#include <cstdlib>

extern "C" int sc_main(int, char**) { return 0; }

int main(int argc, char** argv) {
  setenv("SC_COPYRIGHT_MESSAGE", "DISABLE", 1);
  return Catch::Session().run(argc, argv);
}
