/* atomr-dlpack-private.h — the DLPack ABI (DLPack 1.x, and the legacy
 * unversioned struct), written from the published specification
 * (https://dmlc.github.io/dlpack/latest/c_api.html).  Debian ships only
 * DLPack 0.6 (libdlpack-dev), which lacks DLManagedTensorVersioned.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#include <stdint.h>

#define ATOMR_DLPACK_MAJOR 1
#define ATOMR_DLPACK_MINOR 1

typedef struct {
  uint32_t major;
  uint32_t minor;
} AtomrDLPackVersion;

enum {
  ATOMR_DL_CPU = 1,
  ATOMR_DL_CUDA = 2,
  ATOMR_DL_CUDA_HOST = 3,
  ATOMR_DL_CUDA_MANAGED = 13,
};

typedef struct {
  int32_t device_type;
  int32_t device_id;
} AtomrDLDevice;

enum {
  ATOMR_DL_INT = 0,
  ATOMR_DL_UINT = 1,
  ATOMR_DL_FLOAT = 2,
  ATOMR_DL_OPAQUE_HANDLE = 3,
  ATOMR_DL_BFLOAT = 4,
  ATOMR_DL_COMPLEX = 5,
  ATOMR_DL_BOOL = 6,
  ATOMR_DL_FLOAT8_E4M3FN = 10,
  ATOMR_DL_FLOAT8_E5M2 = 12,
};

typedef struct {
  uint8_t  code;
  uint8_t  bits;
  uint16_t lanes;
} AtomrDLDataType;

typedef struct {
  void           *data;
  AtomrDLDevice   device;
  int32_t         ndim;
  AtomrDLDataType dtype;
  int64_t        *shape;
  int64_t        *strides;      /* elements; NULL: compact row-major */
  uint64_t        byte_offset;
} AtomrDLTensor;

typedef struct AtomrDLManagedTensor {
  AtomrDLTensor dl_tensor;
  void         *manager_ctx;
  void        (*deleter) (struct AtomrDLManagedTensor *self);
} AtomrDLManagedTensor;

#define ATOMR_DLPACK_FLAG_READ_ONLY (UINT64_C (1) << 0)
#define ATOMR_DLPACK_FLAG_IS_COPIED (UINT64_C (1) << 1)

typedef struct AtomrDLManagedTensorVersioned {
  AtomrDLPackVersion version;
  void              *manager_ctx;
  void             (*deleter) (struct AtomrDLManagedTensorVersioned *self);
  uint64_t           flags;
  AtomrDLTensor      dl_tensor;
} AtomrDLManagedTensorVersioned;

/* The layouts every DLPack consumer reads by offset. */
G_STATIC_ASSERT (sizeof (AtomrDLTensor) == 48);
G_STATIC_ASSERT (sizeof (AtomrDLManagedTensor) == 64);
G_STATIC_ASSERT (sizeof (AtomrDLManagedTensorVersioned) == 80);
G_STATIC_ASSERT (G_STRUCT_OFFSET (AtomrDLManagedTensorVersioned, dl_tensor) == 32);
