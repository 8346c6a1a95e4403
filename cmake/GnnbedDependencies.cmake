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
    # Hopper (H100/H200) only by default: every extra architecture costs CI another device-code
    # compilation. Override with -DCMAKE_CUDA_ARCHITECTURES="80;90" for A100s.
    if(NOT DEFINED CMAKE_CUDA_ARCHITECTURES)
      set(CMAKE_CUDA_ARCHITECTURES 90)
    endif()
    set(CMAKE_CUDA_COMPILER "${CUDAToolkit_NVCC_EXECUTABLE}")
    # C++17 for device code: CMake 3.25 does not know nvcc 13's C++20 flag, and the one .cu file
    # (with the constexpr hash it shares with the CPU) needs nothing newer.
    set(CMAKE_CUDA_STANDARD 17)
    set(CMAKE_CUDA_STANDARD_REQUIRED ON)
    # The CUDA runtime comes from CUDA::cudart (shared), linked where it is used: CMake's default
    # (static cudart and cudadevrt, by bare name) fails where it could not detect nvcc's implicit
    # link directories, as with the pip-style layout of /usr/local/cuda on our machines.
    set(CMAKE_CUDA_RUNTIME_LIBRARY None)
    enable_language(CUDA)
    add_library(gnnbed_nccl INTERFACE)
    target_include_directories(gnnbed_nccl SYSTEM INTERFACE ${NCCL_INCLUDE_DIR})
    target_link_libraries(gnnbed_nccl INTERFACE ${NCCL_LIBRARY} CUDA::cudart)
    set(GNNBED_CUDA_STATUS "on (CUDA ${CUDAToolkit_VERSION}, ${CMAKE_CUDA_ARCHITECTURES}, NCCL ${NCCL_LIBRARY})")
  elseif(GNNBED_WITH_CUDA STREQUAL "ON")
    message(FATAL_ERROR "GNNBED_WITH_CUDA=ON but CUDA >= 13 with NCCL was not found "
                        "(looked under CUDAToolkit_ROOT='${CUDAToolkit_ROOT}')")
  else()
    set(GNNBED_CUDA_STATUS "off (CUDA 13 + NCCL not found)")
  endif()
endif()
