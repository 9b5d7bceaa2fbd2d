// main() of a sealed worker: reads calls on fd 3, answers on fd 4, buffers in the shared memory
// on fd 5. The checker (sealed.hpp) starts it, in the grader's sandbox.
#include <grade/sealed_worker.hpp>

#include <workbook/not_implemented.hpp>

#include <bit>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <map>
#include <stdexcept>
#include <string>
#include <typeinfo>

#include <cxxabi.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <nlohmann/json.hpp>

namespace workbook::sealed {
namespace {

std::map<std::string, Function>& table() {
  static std::map<std::string, Function> functions;
  return functions;
}

std::size_t element_size(const std::string& type) {
  if (type == "f32" || type == "i32") return 4;
  if (type == "f64") return 8;
  if (type == "i8" || type == "u8") return 1;
  throw std::runtime_error("unknown element type " + type);
}

std::string demangled(const char* name) {
  int status = 0;
  char* text = abi::__cxa_demangle(name, nullptr, nullptr, &status);
  std::string out = status == 0 && text ? text : name;
  std::free(text);
  return out;
}

}  // namespace

double Call::number(std::size_t i) const {
  if (i >= arguments_.size() || arguments_[i].is_buffer)
    throw std::logic_error("sealed call: argument " + std::to_string(i) + " is not a number");
  return arguments_[i].number;
}

const Call::Argument& Call::buffer(std::size_t i, const char* type) const {
  if (i >= arguments_.size() || !arguments_[i].is_buffer || arguments_[i].type != type)
    throw std::logic_error("sealed call: argument " + std::to_string(i) + " is not a buffer of " +
                           type);
  return arguments_[i];
}

Registration::Registration(const char* name, Function function) {
  table()[name] = function;
}

}  // namespace workbook::sealed

int main() {
  using nlohmann::json;
  using namespace workbook::sealed;
  FILE* in = fdopen(3, "r");
  FILE* out = fdopen(4, "w");
  struct stat s;
  if (in == nullptr || out == nullptr || fstat(5, &s) != 0) {
    std::fprintf(stderr,
                 "a sealed worker runs under the autograder's checker (it needs fds 3, 4 and 5)\n");
    return 2;
  }
  const std::size_t capacity = static_cast<std::size_t>(s.st_size);
  auto* base =
      static_cast<std::byte*>(mmap(nullptr, capacity, PROT_READ | PROT_WRITE, MAP_SHARED, 5, 0));
  if (base == MAP_FAILED) {
    std::perror("mmap");
    return 2;
  }
  char* line = nullptr;
  std::size_t size = 0;
  while (getline(&line, &size, in) > 0) {
    json reply;
    try {
      const json command = json::parse(line);
      const std::string name = command.at("fn").get<std::string>();
      std::vector<Call::Argument> arguments;
      for (const json& a : command.at("args")) {
        Call::Argument argument;
        if (a.contains("buffer")) {
          const std::size_t offset = a["buffer"].at(0).get<std::size_t>();
          argument.count = a["buffer"].at(1).get<std::size_t>();
          argument.type = a["buffer"].at(2).get<std::string>();
          if (offset > capacity || argument.count * element_size(argument.type) > capacity - offset)
            throw std::runtime_error("buffer outside the shared memory");
          argument.is_buffer = true;
          argument.data = base + offset;
        } else {
          argument.number = a.at("number").get<double>();
        }
        arguments.push_back(argument);
      }
      const auto f = table().find(name);
      if (f == table().end())
        throw std::runtime_error("no sealed function named '" + name + "' in this worker");
      Call call(std::move(arguments));
      try {
        f->second(call);
        json bits = json::array();
        for (double v : call.returned()) bits.push_back(std::bit_cast<std::uint64_t>(v));
        reply = {{"ok", true}, {"returns", bits}};
      } catch (const workbook::NotImplemented& e) {
        reply = {{"ok", false}, {"kind", "not_implemented"}, {"message", e.what()}};
      } catch (const std::invalid_argument& e) {
        reply = {{"ok", false}, {"kind", "invalid_argument"}, {"message", e.what()}};
      } catch (const std::exception& e) {
        reply = {{"ok", false},
                 {"kind", "exception"},
                 {"type", demangled(typeid(e).name())},
                 {"message", e.what()}};
      } catch (...) {
        reply = {{"ok", false},
                 {"kind", "exception"},
                 {"type", "unknown"},
                 {"message", "a thrown value that is not a std::exception"}};
      }
    } catch (const std::exception& e) {
      reply = {{"ok", false}, {"kind", "protocol"}, {"message", e.what()}};
    }
    const std::string text = reply.dump() + "\n";
    std::fputs(text.c_str(), out);
    std::fflush(out);
  }
  std::free(line);
  return 0;
}
