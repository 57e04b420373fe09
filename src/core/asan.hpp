// NVFP4_ASAN: 1 where this file is compiled with AddressSanitizer (GCC's macro or clang's
// feature test), else 0. One definition for the places that must behave differently under it.
#pragma once

#if defined(__SANITIZE_ADDRESS__)
#define NVFP4_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define NVFP4_ASAN 1
#endif
#endif
#ifndef NVFP4_ASAN
#define NVFP4_ASAN 0
#endif
