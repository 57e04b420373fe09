/* Libraries the plugin loader must refuse, one per compile definition (tests/CMakeLists.txt).
 * Plain C on purpose: it also proves include/nvfp4bench/plugin.h compiles as C.
 *   BAD_ABI    reports ABI version 999
 *   NO_ENTRY   exports no entry symbol
 *   CLASH      names its kernel "host", a built-in
 *   EMPTY      lists no kernels
 *   BAD_NAME   names its kernel "has space"
 *   BAD_CONFIGS  its optional configurations table names a kernel it does not have
 */
#include "nvfp4bench/plugin.h"

static int32_t run(void* user, const nvfp4bench_problem* p, const nvfp4bench_operands* o,
                   void* ws, void* stream, char* msg, size_t size) {
  (void)user, (void)p, (void)o, (void)ws, (void)stream, (void)msg, (void)size;
  return NVFP4BENCH_ERROR;
}

#if defined(CLASH)
#define KERNEL_NAME "host"
#elif defined(BAD_NAME)
#define KERNEL_NAME "has space"
#else
#define KERNEL_NAME "bad-plugin"
#endif

static const nvfp4bench_kernel kernels[] = {
    {KERNEL_NAME, "test plugin the loader refuses", NVFP4BENCH_SPACE_HOST, 0, 0, 0, 0, 0, run}};

#if defined(BAD_ABI)
static const nvfp4bench_plugin plugin = {999, 1, kernels};
#elif defined(EMPTY)
static const nvfp4bench_plugin plugin = {NVFP4BENCH_PLUGIN_ABI_VERSION, 0, kernels};
#else
static const nvfp4bench_plugin plugin = {NVFP4BENCH_PLUGIN_ABI_VERSION, 1, kernels};
#endif

#if defined(NO_ENTRY)
NVFP4BENCH_PLUGIN_EXPORT const nvfp4bench_plugin* some_other_symbol(void) { return &plugin; }
#else
NVFP4BENCH_PLUGIN_EXPORT const nvfp4bench_plugin* nvfp4bench_plugin_entry(void) { return &plugin; }
#endif

#if defined(BAD_CONFIGS)
static int32_t list(void* user, const nvfp4bench_problem* p, uint32_t index, char* buf, size_t size) {
  (void)user, (void)p, (void)index, (void)buf, (void)size;
  return NVFP4BENCH_UNSUPPORTED;
}
static int32_t set(void* user, const char* config, const nvfp4bench_problem* p, char* msg, size_t size) {
  (void)user, (void)config, (void)p, (void)msg, (void)size;
  return NVFP4BENCH_OK;
}
static const nvfp4bench_kernel_configs configs[] = {{"not-in-the-table", list, set, 0}};
static const nvfp4bench_plugin_configs plugin_configs = {1, configs};
NVFP4BENCH_PLUGIN_EXPORT const nvfp4bench_plugin_configs* nvfp4bench_plugin_configs_entry(void) {
  return &plugin_configs;
}
#endif
