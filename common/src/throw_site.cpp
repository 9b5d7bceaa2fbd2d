// Every throw passes here first, so that a test ended by an exception can say which line threw it
// (code_location.hpp). This file includes no C++ library header: compilers declare __cxa_throw
// themselves with different types (GCC 13's second parameter is void*, libstdc++ 12's cxxabi.h a
// std::type_info*), and a second declaration that differs does not compile. Only its name links.
#include <workbook/internal/sanitized.hpp>

#include <dlfcn.h>

namespace workbook::testing::internal {
void record_throw_site();
// Referred to by prepare_code_location, so that this file is linked from the static library
// whenever the crash report is (nothing else names it: __cxa_throw may come from the runtime).
extern const bool kThrowSiteLinked;
const bool kThrowSiteLinked = true;
}  // namespace workbook::testing::internal

// AddressSanitizer and ThreadSanitizer wrap __cxa_throw themselves: there, this one stays out.
#if WORKBOOK_SANITIZED
#elif defined(WORKBOOK_WRAP_CXA_THROW)
// The C++ runtime linked statically (a toolchain with only libstdc++.a): a second __cxa_throw would
// not link, so the linker's --wrap=__cxa_throw (common/CMakeLists.txt) sends every throw, the
// runtime's own included, here first.
extern "C" [[noreturn]] void __real___cxa_throw(void* object, void* type, void (*destroy)(void*));
extern "C" [[noreturn]] void __wrap___cxa_throw(void* object, void* type, void (*destroy)(void*)) {
  workbook::testing::internal::record_throw_site();
  __real___cxa_throw(object, type, destroy);
}
#else
// The C++ runtime a shared library: this definition in the executable comes first for every
// caller, the runtime's own throws (std::vector::at's) included; it passes the throw on.
extern "C" [[noreturn]] void __cxa_throw(void* object, void* type, void (*destroy)(void*)) {
  using Throw = void (*)(void*, void*, void (*)(void*));
  static const auto runtime = reinterpret_cast<Throw>(dlsym(RTLD_NEXT, "__cxa_throw"));
  if (!runtime) __builtin_trap();  // no runtime after this one: see WORKBOOK_WRAP_CXA_THROW
  workbook::testing::internal::record_throw_site();
  runtime(object, type, destroy);
  __builtin_unreachable();
}
#endif
