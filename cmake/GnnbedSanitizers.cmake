# Sanitized builds. GNNBED_SANITIZE lists the sanitizers every C and C++ target is built with
# (scripts/sanitize.sh uses "address,undefined"); undefined behaviour then stops the program, so a
# test that meets it fails instead of printing a warning nobody reads. GNNBED_BUILD_FUZZERS builds
# the file readers' fuzz targets for libFuzzer (clang only); without it the same targets are built
# into a replay driver that ctest runs over a seeded, mutated corpus.
set(GNNBED_SANITIZE "" CACHE STRING "Sanitizers for every target, e.g. address,undefined (empty: none)")
option(GNNBED_BUILD_FUZZERS "Build the file readers' libFuzzer targets (needs clang)" OFF)

if(GNNBED_BUILD_FUZZERS)
  if(NOT CMAKE_CXX_COMPILER_ID MATCHES "Clang")
    message(FATAL_ERROR "GNNBED_BUILD_FUZZERS needs clang (libFuzzer); configure with "
                        "CC=clang CXX=clang++, as scripts/fuzz.sh does")
  endif()
  if(NOT GNNBED_SANITIZE)
    set(GNNBED_SANITIZE "address,undefined")
  endif()
  # Coverage instrumentation everywhere; only the fuzz targets link libFuzzer's main.
  add_compile_options($<$<COMPILE_LANGUAGE:C,CXX>:-fsanitize=fuzzer-no-link>)
endif()

if(GNNBED_SANITIZE)
  if(GNNBED_WITH_CUDA STREQUAL "ON")
    message(FATAL_ERROR "GNNBED_SANITIZE is for host builds: configure with -DGNNBED_WITH_CUDA=OFF")
  endif()
  # nvcc's host pass does not take these flags; device code is not sanitized anyway.
  set(GNNBED_WITH_CUDA OFF)
  add_compile_options($<$<COMPILE_LANGUAGE:C,CXX>:-fsanitize=${GNNBED_SANITIZE}>
                      $<$<COMPILE_LANGUAGE:C,CXX>:-fno-sanitize-recover=all>
                      $<$<COMPILE_LANGUAGE:C,CXX>:-fno-omit-frame-pointer>)
  add_link_options(-fsanitize=${GNNBED_SANITIZE})
endif()
