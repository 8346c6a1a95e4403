# Every external dependency is found here, once, as an imported target. Nothing is downloaded.
find_package(PkgConfig REQUIRED)
find_package(Threads REQUIRED)
find_package(OpenMP REQUIRED COMPONENTS CXX)
find_package(ZLIB REQUIRED)
find_package(nlohmann_json 3.10 REQUIRED)
find_package(Boost 1.74 REQUIRED COMPONENTS program_options)
find_package(METIS REQUIRED)
find_package(MPI REQUIRED COMPONENTS CXX)
pkg_check_modules(SIMGRID REQUIRED IMPORTED_TARGET simgrid>=3.32)
# OpenBLAS's OpenMP build, not its pthread build: our kernels are OpenMP-parallel, and the pthread
# build's spinning worker threads fight them for the cores (measured: Citeseer GCN epochs 2x slower).
find_package(OpenBLAS 0.3 CONFIG REQUIRED NO_DEFAULT_PATH
             PATHS /usr/lib/${CMAKE_LIBRARY_ARCHITECTURE}/openblas-openmp/cmake/openblas
             DOC "Debian's libopenblas-openmp-dev")
add_library(gnnbed_blas INTERFACE)
target_include_directories(gnnbed_blas SYSTEM INTERFACE ${OpenBLAS_INCLUDE_DIRS})
target_link_libraries(gnnbed_blas INTERFACE ${OpenBLAS_LIBRARIES} OpenMP::OpenMP_CXX)
if(GNNBED_BUILD_TESTS)
  find_package(GTest REQUIRED)
endif()

# The CUDA/NCCL backend is optional: it switches on only where the toolkit and NCCL are both found.
set(GNNBED_CUDA_STATUS "off")
if(NOT GNNBED_WITH_CUDA STREQUAL "OFF")
  if(NOT DEFINED CUDAToolkit_ROOT AND EXISTS "/usr/local/cuda")
    set(CUDAToolkit_ROOT "/usr/local/cuda")
  endif()
  find_package(CUDAToolkit 13 QUIET)
  if(CUDAToolkit_FOUND)
    find_path(NCCL_INCLUDE_DIR nccl.h HINTS ${CUDAToolkit_INCLUDE_DIRS})
    find_library(NCCL_LIBRARY nccl HINTS ${CUDAToolkit_LIBRARY_DIR})
  endif()
  if(CUDAToolkit_FOUND AND NCCL_INCLUDE_DIR AND NCCL_LIBRARY)
    set(GNNBED_HAVE_CUDA ON)
    set(GNNBED_CUDA_STATUS "on (CUDA ${CUDAToolkit_VERSION}, NCCL ${NCCL_LIBRARY})")
  elseif(GNNBED_WITH_CUDA STREQUAL "ON")
    message(FATAL_ERROR "GNNBED_WITH_CUDA=ON but CUDA >= 13 with NCCL was not found "
                        "(looked under CUDAToolkit_ROOT='${CUDAToolkit_ROOT}')")
  else()
    set(GNNBED_CUDA_STATUS "off (CUDA 13 + NCCL not found)")
  endif()
endif()
