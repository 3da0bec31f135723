/* The optional second entry of a lab module: reductions over any operator of a fixed list, for
 * the labs that teach them (lab 12). A module that exports it still exports the sum entry of
 * lab_abi.h, so the tests, the benchmark and the grader treat its sum like any lab's; the tools
 * look this entry up by name and use it only when it is there. Labs 01-11 do not export it.
 * A lab file never fills this in by hand: REDUCTION_DEFINE_OPERATOR_LAB in operators.hpp does.
 * Plain C, like lab_abi.h, so that any compiler that builds a module agrees on the layout. */
#ifndef REDUCTION_OPERATOR_ABI_H
#define REDUCTION_OPERATOR_ABI_H

#include <reduction/lab_abi.h>

#ifdef __cplusplus
extern "C" {
#endif

#define REDUCTION_OPERATOR_ABI_VERSION 1
#define REDUCTION_OPERATOR_ENTRY_SYMBOL "reduction_operator_lab_v1"

/* The operators. For each, what an empty input gives (the identity) and how special values go:
 *  SUM      0; int wraps modulo 2^32 (two's complement), float follows IEEE (NaN and inf propagate).
 *  PRODUCT  1; int wraps modulo 2^32 (computed as unsigned), float follows IEEE.
 *  MIN      INT_MAX / +inf. Float: a NaN anywhere gives NaN (IEEE 754-2019 minimum, NumPy's
 *           np.min); -inf and +inf are ordinary values; which zero min(-0, +0) gives is unspecified.
 *  MAX      INT_MIN / -inf, the mirror of MIN.
 *  MOMENTS  float only: the (count, mean, M2) triple below, identity (0, 0, 0), combined with Chan
 *           et al.'s parallel formula. The mean and standard deviation of an empty input are NaN. */
typedef enum ReductionOperator {
  REDUCTION_OPERATOR_SUM = 0,
  REDUCTION_OPERATOR_PRODUCT = 1,
  REDUCTION_OPERATOR_MIN = 2,
  REDUCTION_OPERATOR_MAX = 3,
  REDUCTION_OPERATOR_MOMENTS = 4
} ReductionOperator;

#define REDUCTION_OPERATOR_COUNT 5

/* The value a MOMENTS reduction produces: how many values, their mean, and M2, the sum of their
 * squared deviations from that mean. Population variance M2 / count, sample variance
 * M2 / (count - 1). 16 bytes, no padding: the same layout on host and device. */
typedef struct ReductionMoments {
  unsigned long long count;
  float mean;
  float m2;
} ReductionMoments;

/* Reduces in[0, num_items) with `op` (a ReductionOperator other than MOMENTS) into *out, on the
 * terms of the sum entry (lab.hpp): device pointers, scratch given, everything on `stream`. An
 * operator the module does not support gives REDUCTION_LAB_ERROR. */
typedef ReductionLabStatus (*ReductionReduceIntFn)(int op, const int* in, size_t num_items, int* out,
                                                   void* temp_storage, size_t temp_storage_bytes,
                                                   cudaStream_t stream, char* message, size_t message_size);
typedef ReductionLabStatus (*ReductionReduceFloatFn)(int op, const float* in, size_t num_items, float* out,
                                                     void* temp_storage, size_t temp_storage_bytes,
                                                     cudaStream_t stream, char* message, size_t message_size);
/* MOMENTS of float inputs into one ReductionMoments in device memory. */
typedef ReductionLabStatus (*ReductionMomentsFloatFn)(const float* in, size_t num_items, ReductionMoments* out,
                                                      void* temp_storage, size_t temp_storage_bytes,
                                                      cudaStream_t stream, char* message, size_t message_size);

typedef struct ReductionOperatorLab {
  int abi_version; /* REDUCTION_OPERATOR_ABI_VERSION */
  /* Every operator combines values along the same tree as the lab's sum, so the lab's
   * float_error_depth (lab_abi.h) is also the longest chain of float combines of each of them. */
  ReductionReduceIntFn reduce_int;
  ReductionReduceFloatFn reduce_float;
  ReductionMomentsFloatFn moments_float;
} ReductionOperatorLab;

typedef const ReductionOperatorLab* (*ReductionOperatorEntryFn)(void);

#ifdef __cplusplus
}
#endif

#endif /* REDUCTION_OPERATOR_ABI_H */
