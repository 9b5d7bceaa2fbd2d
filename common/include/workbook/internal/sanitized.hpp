#pragma once
/// \file sanitized.hpp
/// \brief WORKBOOK_SANITIZED: 1 in a build under AddressSanitizer or ThreadSanitizer (GCC's and
/// Clang's ways of saying so), else 0. Such a build reports crashes itself and wraps __cxa_throw:
/// the harness's own crash report and throw hook stay out there. A macro, and no include, so that
/// a file that must include no library header (throw_site.cpp) can use it too.

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define WORKBOOK_SANITIZED 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
#define WORKBOOK_SANITIZED 1
#endif
#endif
#ifndef WORKBOOK_SANITIZED
#define WORKBOOK_SANITIZED 0
#endif
