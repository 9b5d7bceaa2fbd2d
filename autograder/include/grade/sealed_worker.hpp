#pragma once
/// \file sealed_worker.hpp
/// \brief The student's side of a sealed test: a small table of the lab's functions, linked with
/// the student's code into a worker process that the checker calls (see sealed.hpp).
///
/// The worker only computes: the checker sends inputs through shared memory, asks for one call,
/// and checks the outputs itself with the oracle, in its own process, where no student code runs.
/// Whatever the student's code does inside the worker, the only thing it can send back is data.
///
/// \code
/// #include "vector_ops.hpp"
/// #include <grade/sealed_worker.hpp>
///
/// WORKBOOK_SEALED_FUNCTION(relu) { lab01::relu(call.in<float>(0), call.out<float>(1)); }
/// WORKBOOK_SEALED_FUNCTION(dot) { call.returns(lab01::dot(call.in<float>(0), call.in<float>(1)));
/// } \endcode

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

namespace workbook::sealed {

/// The element types a buffer argument can have, named as on the wire.
template <class T>
constexpr const char* type_name();
template <>
constexpr const char* type_name<float>() {
  return "f32";
}
template <>
constexpr const char* type_name<double>() {
  return "f64";
}
template <>
constexpr const char* type_name<std::int8_t>() {
  return "i8";
}
template <>
constexpr const char* type_name<std::uint8_t>() {
  return "u8";
}
template <>
constexpr const char* type_name<std::int32_t>() {
  return "i32";
}

/// One call as the worker sees it: its arguments, in order, and its return values.
class Call {
 public:
  struct Argument {
    bool is_buffer = false;
    std::byte* data = nullptr;
    std::size_t count = 0;
    std::string type;
    double number = 0;
  };
  explicit Call(std::vector<Argument> arguments) : arguments_(std::move(arguments)) {}

  /// Buffer argument i, read-only (throws when argument i is not a buffer of T).
  template <class T>
  std::span<const T> in(std::size_t i) const {
    const Argument& a = buffer(i, type_name<T>());
    return {reinterpret_cast<const T*>(a.data), a.count};
  }
  /// Buffer argument i, writable.
  template <class T>
  std::span<T> out(std::size_t i) const {
    const Argument& a = buffer(i, type_name<T>());
    return {reinterpret_cast<T*>(a.data), a.count};
  }
  /// Number argument i.
  double number(std::size_t i) const;
  std::int64_t integer(std::size_t i) const { return static_cast<std::int64_t>(number(i)); }
  /// A value the function returns (sent back bit for bit, NaN and infinities included).
  void returns(double value) { returns_.push_back(value); }

  const std::vector<double>& returned() const { return returns_; }

 private:
  const Argument& buffer(std::size_t i, const char* type) const;
  std::vector<Argument> arguments_;
  std::vector<double> returns_;
};

using Function = void (*)(Call&);

/// Adds a function to the worker's table (use WORKBOOK_SEALED_FUNCTION).
struct Registration {
  Registration(const char* name, Function function);
};

}  // namespace workbook::sealed

/// Defines the sealed entry `name`; its body sees `call` (a workbook::sealed::Call&).
#define WORKBOOK_SEALED_FUNCTION(name)                                               \
  static void workbook_sealed_##name(::workbook::sealed::Call& call);                \
  static const ::workbook::sealed::Registration workbook_sealed_registration_##name( \
      #name, &workbook_sealed_##name);                                               \
  static void workbook_sealed_##name([[maybe_unused]] ::workbook::sealed::Call& call)
