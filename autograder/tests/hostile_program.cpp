// What untrusted code might do, one behaviour per command, for the sandbox's tests:
//   hostile_program spin | fork-bomb | alloc MiB | write-file PATH MiB | print MiB | print-forever
//   | read-file PATH | connect HOST PORT | identity | daemon MARKER | write-fd FD TEXT | exit CODE
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iostream>
#include <new>
#include <string>
#include <vector>

int main(int argc, char** argv) {
  if (argc < 2) return 2;
  const std::string what = argv[1];
  if (what == "spin") {
    volatile bool forever = true;  // volatile: the compiler may not assume the loop ends
    while (forever) {
    }
  }
  if (what == "fork-bomb") {
    for (;;) {
      if (fork() < 0) usleep(1000);  // at the process limit: keep trying, as a real one would
    }
  }
  if (what == "alloc") {
    const std::size_t mib = std::strtoul(argv[2], nullptr, 10);
    try {
      std::vector<char> block(mib << 20, 1);
      std::cout << "allocated " << mib << " MiB\n";
      return 0;
    } catch (const std::bad_alloc&) {
      std::cout << "bad_alloc\n";
      return 3;
    }
  }
  if (what == "reserve") {
    // Address space only, as the CUDA driver reserves it at start: nothing is allocated.
    const std::size_t gib = std::strtoul(argv[2], nullptr, 10);
    void* p =
        mmap(nullptr, gib << 30, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    std::cout << (p == MAP_FAILED ? "cannot reserve" : "reserved") << " " << gib << " GiB\n";
    return p == MAP_FAILED ? 8 : 0;
  }
  if (what == "write-file") {
    const std::size_t mib = std::strtoul(argv[3], nullptr, 10);
    std::FILE* f = std::fopen(argv[2], "w");
    if (!f) return 4;
    std::vector<char> block(1 << 20, 'x');
    for (std::size_t i = 0; i < mib; ++i) std::fwrite(block.data(), 1, block.size(), f);
    std::fclose(f);
    return 0;
  }
  if (what == "print" || what == "print-forever") {
    const std::size_t mib = what == "print" ? std::strtoul(argv[2], nullptr, 10) : ~std::size_t{0};
    std::string block(1 << 20, 'y');
    block.back() = '\n';
    for (std::size_t i = 0; i < mib; ++i) std::fwrite(block.data(), 1, block.size(), stdout);
    return 0;
  }
  if (what == "read-file") {
    std::ifstream in(argv[2]);
    if (!in) {
      std::cout << "cannot read: " << std::strerror(errno) << "\n";
      return 5;
    }
    std::cout << "read: " << in.rdbuf() << "\n";
    return 0;
  }
  if (what == "connect") {
    const int s = socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_port = htons(static_cast<uint16_t>(std::atoi(argv[3])));
    inet_pton(AF_INET, argv[2], &a.sin_addr);
    if (s < 0 || connect(s, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0) {
      std::cout << "no connection: " << std::strerror(errno) << "\n";
      return 6;
    }
    std::cout << "connected\n";
    return 0;
  }
  if (what == "identity") {
    std::cout << "uid " << getuid() << " euid " << geteuid() << " nnp "
              << prctl(PR_GET_NO_NEW_PRIVS, 0, 0, 0, 0) << "\n";
    std::ifstream status("/proc/self/status");
    for (std::string line; std::getline(status, line);)
      if (line.rfind("CapEff", 0) == 0) std::cout << line << "\n";
    for (char** e = environ; *e; ++e) std::cout << "env " << *e << "\n";
    return 0;
  }
  if (what == "daemon") {
    // A child that leaves the process group and outlives its parent: a sandbox must still end it.
    if (fork() == 0) {
      setsid();
      execl("/bin/sleep", argv[2], "300", static_cast<char*>(nullptr));
      _exit(1);
    }
    volatile bool forever = true;  // volatile: the compiler may not assume the loop ends
    while (forever) {
    }
  }
  if (what == "exit") {
    // An exit code that a shell (or bwrap) would also report for a death by signal (128 + n).
    return std::atoi(argv[2]);
  }
  if (what == "write-fd") {
    const int fd = std::atoi(argv[2]);
    const std::string text = std::string(argv[3]) + "\n";
    return write(fd, text.data(), text.size()) == static_cast<ssize_t>(text.size()) ? 0 : 7;
  }
  return 2;
}
