#include <workbook/not_implemented.hpp>

namespace workbook {

std::string repository_path(std::string_view path) {
  // The compiler records the absolute path; a student knows the file by its place in the
  // repository.
  std::size_t best = std::string_view::npos;
  for (std::string_view root : {"/labs/", "/solutions/", "/common/", "/autograder/"}) {
    const std::size_t at = path.rfind(root);
    if (at != std::string_view::npos && (best == std::string_view::npos || at > best)) best = at;
  }
  if (best == std::string_view::npos) return std::string(path);
  return std::string(path.substr(best + 1));
}

NotImplemented::NotImplemented(std::string_view function, std::source_location where)
    : std::logic_error("not implemented yet: implement " + std::string(function) + " in " +
                       repository_path(where.file_name())),
      function_(function),
      file_(repository_path(where.file_name())) {}

}  // namespace workbook
