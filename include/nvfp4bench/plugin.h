/* nvfp4bench plugin ABI, version 1: bring your own NVFP4 GEMM kernels.
 *
 * A plugin is a shared library that exports one C function,
 *
 *     const nvfp4bench_plugin* nvfp4bench_plugin_entry(void);
 *
 * returning a table of kernels that stays valid until the process exits. Load it with
 * `nvfp4bench --kernel-lib path/to/libmine.so --kernel NAME` (the option repeats); `--list`
 * shows the plugin's kernels beside the built-in ones. A kernel is run, verified against the
 * reference and timed exactly like a built-in one.
 *
 * Contract:
 *  - Each kernel computes, for every batch l < L, C[l] = A[l] * B[l]^T (fp16 output) from the
 *    operands below. All pointers are in one memory space: device pointers for
 *    NVFP4BENCH_SPACE_DEVICE kernels, host pointers for NVFP4BENCH_SPACE_HOST kernels.
 *      a            [L, M, K/2] bytes: two E2M1 codes per byte, the even K index in the low nibble
 *      b            [L, N, K/2] bytes, same form
 *      sfa, sfb     [L, M, K/16], [L, N, K/16] E4M3 scale bytes, linear, used unsigned (UE4M3)
 *      sfa_blocked, sfb_blocked  the same scales in the 128x4-atom blocked layout (cuBLASLt's),
 *                   Rp*Kp bytes per batch, Rp = roundup(rows,128), Kp = roundup(K/16,4), padding 0
 *      c            [L, M, N] fp16 bits, row-major per batch. Its content before a call is
 *                   unspecified (the first call's C is a NaN pattern, every timed call's a
 *                   random fill) and every call's operands may differ from the last one's: every
 *                   call must compute all of C from its inputs (docs/cli.md, "The verdict")
 *    M, N, L >= 1 and K a positive multiple of 16; all sizes fit in int64.
 *  - run() of a device kernel is asynchronous: it enqueues its work on `stream` (a cudaStream_t
 *    passed as void*) and returns. All of its work goes on that stream, and it must not wait
 *    on the host for device work: while a timed sample is enqueued the stream is held and the
 *    hold fills every SM, so such a wait stalls until the hold times out, and the verdict ends
 *    the case incorrect ("work outside the timed stream"). The tool synchronizes, checks for
 *    CUDA errors (a fault is reported as a runtime failure, exit 3) and times it with events on
 *    that stream. Host kernels get stream == NULL and compute all of C before returning, and
 *    leave it readable: the tool reads it through the operating system, and a page left
 *    protected or unmapped ends the case incorrect.
 *  - A kernel works on its operands, workspace and C only: it does not install signal handlers or
 *    seccomp filters, trace processes (the tool refuses seccomp and ptrace), change memory
 *    protections outside its own allocations or write the tool's memory (the tool's GOT is
 *    read-only: such a write crashes the call, exit 3), and its work is done when run() returns
 *    (the tool reads C at once and times that read).
 *  - `workspace` points to workspace_bytes(problem) bytes in the kernel's memory space (NULL
 *    when 0); its contents are undefined at each call.
 *  - Return NVFP4BENCH_OK, or another status and a one-line reason written into `msg` (a
 *    NUL-terminated string of at most msg_size bytes; the buffer starts zeroed). The tool then
 *    stops with a runtime failure (exit 3) that quotes the message.
 *  - Callbacks must not throw C++ exceptions or call exit() (one that exits or crashes is reported
 *    as a runtime failure, exit 3, naming the kernel). They may be called many times
 *    (warm-up and timing) and from the tool's main thread only.
 *  - The tool may run the same kernel on different problems in one process (sweeps).
 *
 * Configurations (optional; docs/plugins.md): a kernel that can run a problem more than one way
 * (a tile, an unroll, a path) may list those ways and let the tool pin one (--list-configs,
 * --kernel-config, the sweep key kernel_config). The plugin then also exports
 *
 *     const nvfp4bench_plugin_configs* nvfp4bench_plugin_configs_entry(void);
 *
 * (a table valid until the process exits) naming, per kernel, the callbacks of
 * nvfp4bench_kernel_configs below. A plugin without that
 * symbol (every plugin written before it) keeps working: its kernels have no configurations.
 *
 * Versioning: abi_version is the first member of nvfp4bench_plugin and the tool refuses a table
 * whose version differs from the one it was built with (exit 2). Any change to these structs
 * increments NVFP4BENCH_PLUGIN_ABI_VERSION; an optional symbol such as the configurations entry
 * is added without one.
 */
#ifndef NVFP4BENCH_PLUGIN_H
#define NVFP4BENCH_PLUGIN_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define NVFP4BENCH_PLUGIN_ABI_VERSION 1
/* The symbol the tool looks up with dlsym. */
#define NVFP4BENCH_PLUGIN_ENTRY_SYMBOL "nvfp4bench_plugin_entry"

/* Status codes returned by the callbacks. */
#define NVFP4BENCH_OK 0
#define NVFP4BENCH_ERROR 1       /* failed: msg says why */
#define NVFP4BENCH_UNSUPPORTED 2 /* shape_check: this problem cannot be run: msg says why */

/* Where a kernel's operands live. */
#define NVFP4BENCH_SPACE_DEVICE 0
#define NVFP4BENCH_SPACE_HOST 1

typedef struct nvfp4bench_problem {
  int64_t m, n, k, l;
} nvfp4bench_problem;

typedef struct nvfp4bench_operands {
  const uint8_t* a;
  const uint8_t* b;
  const uint8_t* sfa;
  const uint8_t* sfb;
  const uint8_t* sfa_blocked;
  const uint8_t* sfb_blocked;
  uint16_t* c;
} nvfp4bench_operands;

typedef struct nvfp4bench_kernel {
  /* Unique among all kernels the tool knows (built-in and loaded), 1..64 characters from
   * [A-Za-z0-9._+:-]; a clash is a usage error. */
  const char* name;
  /* One line for --list and the report; may be NULL. */
  const char* description;
  int32_t space; /* NVFP4BENCH_SPACE_DEVICE or NVFP4BENCH_SPACE_HOST */
  /* Compute capabilities a device kernel runs on, as major*10+minor (90 = 9.0), inclusive;
   * 0 means no bound. Ignored for host kernels. */
  int32_t min_cc;
  int32_t max_cc;
  /* Passed back unchanged as the first argument of every callback. */
  void* user_data;
  /* Optional (NULL: every problem the tool accepts). Returns NVFP4BENCH_OK when the kernel can
   * run `p`, else NVFP4BENCH_UNSUPPORTED with the rule it breaks in msg
   * ("K must be a multiple of 64"); the tool then refuses the case (exit 2). */
  int32_t (*shape_check)(void* user_data, const nvfp4bench_problem* p, char* msg, size_t msg_size);
  /* Optional (NULL: no workspace). Bytes of workspace run() needs for `p`. */
  size_t (*workspace_bytes)(void* user_data, const nvfp4bench_problem* p);
  /* Required. Computes C (see the contract above). */
  int32_t (*run)(void* user_data, const nvfp4bench_problem* p, const nvfp4bench_operands* ops,
                 void* workspace, void* stream, char* msg, size_t msg_size);
} nvfp4bench_kernel;

typedef struct nvfp4bench_plugin {
  uint32_t abi_version; /* NVFP4BENCH_PLUGIN_ABI_VERSION; always the first member */
  uint32_t kernel_count;
  const nvfp4bench_kernel* kernels;
} nvfp4bench_plugin;

/* Optional: configurations (see the top of this file). The symbol the tool looks up. */
#define NVFP4BENCH_PLUGIN_CONFIGS_SYMBOL "nvfp4bench_plugin_configs_entry"

typedef struct nvfp4bench_kernel_configs {
  /* The name of a kernel in the plugin's table (each at most once). Every callback below gets
   * that kernel's user_data. */
  const char* kernel;
  /* Required. Writes the index-th configuration (from 0) the kernel can run for `p` into buf (a
   * NUL-terminated line of at most buf_size bytes) and returns NVFP4BENCH_OK; returns
   * NVFP4BENCH_UNSUPPORTED when index is past the last. Each configuration is spelt as
   * `current` spells it; the tool asks for at most 1024. */
  int32_t (*list)(void* user_data, const nvfp4bench_problem* p, uint32_t index, char* buf,
                  size_t buf_size);
  /* Required. Pins what run() executes for `p` to `config`; "" gives the choice back to the
   * kernel. Returns NVFP4BENCH_OK, or NVFP4BENCH_UNSUPPORTED with the reason in msg (no such
   * configuration, or the problem does not allow it; the tool refuses the case, exit 2). The
   * tool calls it with every case's configuration ("" when none is pinned) before the case's
   * first run of the kernel, so a pin never carries over from one case to the next. */
  int32_t (*set)(void* user_data, const char* config, const nvfp4bench_problem* p, char* msg,
                 size_t msg_size);
  /* Optional (NULL: the pinned configuration, or none). Writes what run() executes for `p` (the
   * report's kernel.configuration) into buf and returns NVFP4BENCH_OK. */
  int32_t (*current)(void* user_data, const nvfp4bench_problem* p, char* buf, size_t buf_size);
} nvfp4bench_kernel_configs;

typedef struct nvfp4bench_plugin_configs {
  uint32_t count;
  const nvfp4bench_kernel_configs* kernels;
} nvfp4bench_plugin_configs;

typedef const nvfp4bench_plugin_configs* (*nvfp4bench_plugin_configs_fn)(void);

/* What a plugin exports: define it as
 *   NVFP4BENCH_PLUGIN_EXPORT const nvfp4bench_plugin* nvfp4bench_plugin_entry(void) { ... }  */
#if defined(_WIN32)
#define NVFP4BENCH_PLUGIN_EXPORT __declspec(dllexport)
#else
#define NVFP4BENCH_PLUGIN_EXPORT __attribute__((visibility("default")))
#endif
typedef const nvfp4bench_plugin* (*nvfp4bench_plugin_entry_fn)(void);
NVFP4BENCH_PLUGIN_EXPORT const nvfp4bench_plugin* nvfp4bench_plugin_entry(void);

#ifdef __cplusplus
}
#endif

#endif /* NVFP4BENCH_PLUGIN_H */
