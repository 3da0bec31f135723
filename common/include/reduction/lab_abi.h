/* The binary interface between a lab module and the tools that load it (tests, benchmark,
 * grader). A lab file never uses this directly: REDUCTION_DEFINE_LAB in lab.hpp fills it in.
 * Plain C so that any compiler that builds a module agrees on the layout. */
#ifndef REDUCTION_LAB_ABI_H
#define REDUCTION_LAB_ABI_H

#include <stddef.h>
#include <cuda_runtime_api.h>

#ifdef __cplusplus
extern "C" {
#endif

#define REDUCTION_LAB_ABI_VERSION 1
#define REDUCTION_LAB_ENTRY_SYMBOL "reduction_lab_v1"

typedef enum ReductionLabStatus {
  REDUCTION_LAB_OK = 0,
  REDUCTION_LAB_NOT_IMPLEMENTED = 1, /* the skeleton's placeholder ran */
  REDUCTION_LAB_ERROR = 2            /* an exception: the message says which */
} ReductionLabStatus;

/* Flags a lab declares about its algorithm. */
enum {
  REDUCTION_LAB_FLOAT_DETERMINISTIC = 1 /* float results are bitwise identical run to run */
};

typedef ReductionLabStatus (*ReductionSumIntFn)(const int* in, size_t num_items, int* out,
                                                void* temp_storage, size_t temp_storage_bytes,
                                                cudaStream_t stream, char* message,
                                                size_t message_size);
typedef ReductionLabStatus (*ReductionSumFloatFn)(const float* in, size_t num_items, float* out,
                                                  void* temp_storage, size_t temp_storage_bytes,
                                                  cudaStream_t stream, char* message,
                                                  size_t message_size);

typedef struct ReductionLab {
  int abi_version;    /* REDUCTION_LAB_ABI_VERSION */
  int number;         /* the folder's number: 2 for "02_atomic" */
  const char* name;   /* folder name without the number: "atomic" */
  const char* title;  /* "global atomic" */
  int runs_on_device; /* 0: a host lab, pointers are host memory and the stream is unused */
  unsigned flags;     /* REDUCTION_LAB_* flags */
  /* h: the longest chain of float additions the algorithm performs for num_items inputs. */
  size_t (*float_error_depth)(size_t num_items);
  ReductionSumIntFn sum_int;
  ReductionSumFloatFn sum_float;
} ReductionLab;

typedef const ReductionLab* (*ReductionLabEntryFn)(void);

#ifdef __cplusplus
}
#endif

#endif /* REDUCTION_LAB_ABI_H */
