#pragma once
/// \file not_implemented.hpp
/// \brief The exception every TODO in a lab stub throws.

#include <source_location>
#include <stdexcept>
#include <string>
#include <string_view>

namespace workbook {

/// Thrown by a stub function the student has not written yet. Its message names the function and
/// the file to edit, e.g. "not implemented yet: implement relu in
/// labs/01_vectorized_relu/vector_ops.cpp", and the tests and the perf driver show it as it is,
/// instead of a crash or a wrong answer.
///
/// \code
/// void relu(std::span<const float> x, std::span<float> y) {
///   throw workbook::NotImplemented("relu");   // TODO(lab01): replace with your kernel
/// }
/// \endcode
class NotImplemented : public std::logic_error {
 public:
  /// \param function the function to implement, as the handout names it
  /// \param where    filled in by the compiler: the stub's file, shown relative to the repository
  explicit NotImplemented(std::string_view function,
                          std::source_location where = std::source_location::current());

  /// The function to implement, as the handout names it ("relu").
  const std::string& function() const { return function_; }
  /// The file to edit, relative to the repository root (labs/NN_topic/file.cpp).
  const std::string& file() const { return file_; }

 private:
  std::string function_;
  std::string file_;
};

/// A path as a student sees it: from labs/, solutions/, common/ or autograder/ on, else unchanged.
std::string repository_path(std::string_view path);

}  // namespace workbook
