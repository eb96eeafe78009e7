/*
 * acl_base.h - the subset of Ascend's ACL base types that npumemfs simulates.
 *
 * Names, types and values follow CANN's acl/acl_base.h so that code written
 * for torch_npu (allocator plug-ins in particular) compiles unchanged against
 * the simulator; only the include path differs.
 */
#ifndef ACL_ACL_BASE_H
#define ACL_ACL_BASE_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#ifndef ACL_FUNC_VISIBILITY
#define ACL_FUNC_VISIBILITY __attribute__((visibility("default")))
#endif

typedef int aclError;
typedef void *aclrtStream;
typedef void *aclrtEvent;
typedef void *aclrtContext;

static const int ACL_SUCCESS = 0;

/* Parameter and state errors (CANN acl_base.h, 1000xx). */
static const int ACL_ERROR_INVALID_PARAM = 100000;
static const int ACL_ERROR_UNINITIALIZE = 100001;
static const int ACL_ERROR_REPEAT_INITIALIZE = 100002;
static const int ACL_ERROR_INVALID_FILE = 100003;
static const int ACL_ERROR_INVALID_DEVICE = 100019;
static const int ACL_ERROR_STORAGE_OVER_LIMIT = 100026;
static const int ACL_ERROR_FEATURE_UNSUPPORTED = 200006;

/* Resource errors (2000xx). */
static const int ACL_ERROR_BAD_ALLOC = 200000;
static const int ACL_ERROR_API_NOT_SUPPORT = 200001;
static const int ACL_ERROR_INVALID_DEVICE_ID = 200002; /* reserved; sim uses 100019 */
static const int ACL_ERROR_MEMORY_ADDRESS_UNALIGNED = 200003;
static const int ACL_ERROR_RESOURCE_NOT_MATCH = 200004;
static const int ACL_ERROR_INVALID_RESOURCE_HANDLE = 200005;
static const int ACL_ERROR_INTERNAL_ERROR = 500000;

/* Runtime errors reported by the driver layer (acl/error_codes/rt_error_codes.h). */
static const int ACL_ERROR_RT_PARAM_INVALID = 107000;
static const int ACL_ERROR_RT_INVALID_DEVICEID = 107001;
static const int ACL_ERROR_RT_MEMORY_ALLOCATION = 207001;
static const int ACL_ERROR_RT_FEATURE_NOT_SUPPORT = 207000;

/* Graph capture (aclmdlRICapture*), same file and values. */
static const int ACL_ERROR_RT_MODEL_CAPTURED = 107026;       /* model is captured */
static const int ACL_ERROR_RT_STREAM_CAPTURED = 107027;      /* stream is captured */
static const int ACL_ERROR_RT_EVENT_CAPTURED = 107028;       /* event is captured */
static const int ACL_ERROR_RT_STREAM_NOT_CAPTURED = 107029;  /* stream is not in capture status */
static const int ACL_ERROR_RT_CAPTURE_MODE_NOT_SUPPORT = 107030; /* not allowed in this capture mode */
static const int ACL_ERROR_RT_STREAM_CAPTURE_IMPLICIT = 107031; /* the default stream in a capture */
static const int ACL_ERROR_RT_STREAM_CAPTURE_UNMATCHED = 107036; /* capture not begun on this stream */
static const int ACL_ERROR_RT_STREAM_CAPTURE_WRONG_THREAD = 107038; /* end not on the beginning thread */
static const int ACL_ERROR_RT_STREAM_CAPTURE_INVALIDATED = 507903; /* the capture was invalidated */

typedef enum {
	ACL_DEBUG = 0,
	ACL_INFO = 1,
	ACL_WARNING = 2,
	ACL_ERROR = 3,
} aclLogLevel;

/*
 * An application's log line, as CANN's aclAppLog: kept when `logLevel` is
 * at least ASCEND_GLOBAL_LOG_LEVEL (0 debug to 3 error, 3 when unset or
 * not a level; 4 keeps none). The simulator has no log daemon: a kept
 * line goes to stderr, or to stdout with ASCEND_SLOG_PRINT_TO_STDOUT=1,
 * as "[LEVEL] APP(pid):func:file:line message".
 */
ACL_FUNC_VISIBILITY void aclAppLog(aclLogLevel logLevel, const char *func, const char *file,
				   uint32_t line, const char *fmt, ...)
	__attribute__((format(printf, 5, 6)));

/*
 * The calling thread's message for its last failed call, in words, or NULL
 * when there is none; reading it clears it. torch_npu's NPU_CHECK_ERROR
 * appends it to "NPU function error: ..." (AclGetErrMsg).
 */
ACL_FUNC_VISIBILITY const char *aclGetRecentErrMsg(void);

#ifdef __cplusplus
}
#endif

#endif /* ACL_ACL_BASE_H */
