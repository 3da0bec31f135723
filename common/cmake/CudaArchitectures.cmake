# Picks CMAKE_CUDA_ARCHITECTURES before project(): the compute capability of the GPU present
# (asked of nvidia-smi), else REDUCTION_FALLBACK_CUDA_ARCHITECTURES. An explicit
# REDUCTION_CUDA_ARCHITECTURES or CMAKE_CUDA_ARCHITECTURES wins.
set(REDUCTION_CUDA_ARCHITECTURES "" CACHE STRING
  "CUDA architectures to build for; empty: the GPU present, else REDUCTION_FALLBACK_CUDA_ARCHITECTURES")
set(REDUCTION_FALLBACK_CUDA_ARCHITECTURES "80;90" CACHE STRING
  "CUDA architectures used when no GPU can be seen at configure time (must include 90)")

function(reduction_pick_cuda_architectures)
  if(DEFINED CMAKE_CUDA_ARCHITECTURES AND NOT CMAKE_CUDA_ARCHITECTURES STREQUAL "")
    return()
  endif()
  if(NOT REDUCTION_CUDA_ARCHITECTURES STREQUAL "")
    set(archs "${REDUCTION_CUDA_ARCHITECTURES}")
  else()
    execute_process(COMMAND nvidia-smi --query-gpu=compute_cap --format=csv,noheader
                    OUTPUT_VARIABLE caps RESULT_VARIABLE rc ERROR_QUIET OUTPUT_STRIP_TRAILING_WHITESPACE)
    set(archs "")
    if(rc EQUAL 0 AND caps MATCHES "^[0-9]+\\.[0-9]+")
      string(REPLACE "\n" ";" caps "${caps}")
      foreach(cap IN LISTS caps)
        string(REPLACE "." "" arch "${cap}")
        list(APPEND archs "${arch}")
      endforeach()
      list(REMOVE_DUPLICATES archs)
      message(STATUS "reduction-labs: building for the GPU present (sm_${archs})")
    else()
      set(archs "${REDUCTION_FALLBACK_CUDA_ARCHITECTURES}")
      message(STATUS "reduction-labs: no GPU seen, building for ${archs}")
    endif()
  endif()
  set(CMAKE_CUDA_ARCHITECTURES "${archs}" CACHE STRING "CUDA architectures" FORCE)
endfunction()
