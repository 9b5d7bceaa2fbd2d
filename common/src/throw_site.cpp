// Every throw passes here first, so that a test ended by an exception can say which line threw it
// (code_location.hpp). This file includes no C++ library header: compilers declare __cxa_throw
// themselves with different types (GCC 13's second parameter is void*, libstdc++ 12's cxxabi.h a
// std::type_info*), and a second declaration that differs does not compile. Only its name links.
#include <dlfcn.h>

namespace workbook::testing::internal {
void record_throw_site();
// Referred to by prepare_code_location, so that this file is linked from the static library
// whenever the crash report is (nothing else names it: __cxa_throw may come from the runtime).
extern const bool kThrowSiteLinked;
const bool kThrowSiteLinked = true;
}  // namespace workbook::testing::internal

// AddressSanitizer and ThreadSanitizer wrap __cxa_throw themselves: there, this one stays out.
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define WORKBOOK_SANITIZED 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
#define WORKBOOK_SANITIZED 1
#endif
#endif

#ifndef WORKBOOK_SANITIZED
extern "C" [[noreturn]] void __cxa_throw(void* object, void* type, void (*destroy)(void*)) {
  using Throw = void (*)(void*, void*, void (*)(void*));
  static const auto runtime = reinterpret_cast<Throw>(dlsym(RTLD_NEXT, "__cxa_throw"));
  if (!runtime) __builtin_trap();  // a C++ runtime linked statically: nothing to pass it to
  workbook::testing::internal::record_throw_site();
  runtime(object, type, destroy);
  __builtin_unreachable();
}
#endif
