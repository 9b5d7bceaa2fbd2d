// The archive module: the zip the grader writes reads back the same, every submission format
// unpacks, and each kind of hostile archive is refused with a message that names it.
#include <grade/archive.hpp>
#include <grade/util.hpp>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdlib>
#include <memory>

#include <sys/stat.h>
#include <unistd.h>

#include <archive.h>
#include <archive_entry.h>

namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using namespace workbook::grade;

// One entry of a hand-made archive, hostile or not.
struct Raw {
  std::string name;
  std::string data;
  mode_t type = AE_IFREG;
  std::string symlink;   ///< the target of a symbolic link
  std::string hardlink;  ///< the target of a hard link
  mode_t perm = 0644;
};

enum class Kind { zip, tar, tar_gz, tar_xz, tar_bz2 };

// The bytes of an archive holding exactly these entries (libarchive writes what it is told).
std::string archive_of(const std::vector<Raw>& entries, Kind kind) {
  std::string out;
  std::unique_ptr<archive, decltype(&archive_write_free)> a(archive_write_new(),
                                                            archive_write_free);
  if (kind == Kind::zip)
    archive_write_set_format_zip(a.get());
  else
    archive_write_set_format_pax_restricted(a.get());
  if (kind == Kind::tar_gz) archive_write_add_filter_gzip(a.get());
  if (kind == Kind::tar_xz) archive_write_add_filter_xz(a.get());
  if (kind == Kind::tar_bz2) archive_write_add_filter_bzip2(a.get());
  archive_write_set_bytes_in_last_block(a.get(), 1);
  const auto append = [](archive*, void* to, const void* data, size_t size) -> la_ssize_t {
    static_cast<std::string*>(to)->append(static_cast<const char*>(data), size);
    return static_cast<la_ssize_t>(size);
  };
  EXPECT_EQ(archive_write_open(a.get(), &out, nullptr, append, nullptr), ARCHIVE_OK);
  for (const Raw& r : entries) {
    std::unique_ptr<archive_entry, decltype(&archive_entry_free)> e(archive_entry_new(),
                                                                    archive_entry_free);
    archive_entry_set_pathname(e.get(), r.name.c_str());
    archive_entry_set_filetype(e.get(), r.type);
    archive_entry_set_perm(e.get(), r.perm);
    if (!r.symlink.empty()) archive_entry_set_symlink(e.get(), r.symlink.c_str());
    if (!r.hardlink.empty()) archive_entry_set_hardlink(e.get(), r.hardlink.c_str());
    archive_entry_set_size(e.get(), r.type == AE_IFREG && r.hardlink.empty()
                                        ? static_cast<la_int64_t>(r.data.size())
                                        : 0);
    EXPECT_GE(archive_write_header(a.get(), e.get()), ARCHIVE_WARN)
        << archive_error_string(a.get());
    if (!r.data.empty() && r.hardlink.empty())
      archive_write_data(a.get(), r.data.data(), r.data.size());
  }
  EXPECT_EQ(archive_write_close(a.get()), ARCHIVE_OK);
  return out;
}

class Unpack : public ::testing::Test {
 protected:
  void SetUp() override {
    dir = fs::temp_directory_path() /
          ("workbook-archive-" + std::to_string(getpid()) + "-" + random_hex(4));
    fs::create_directories(dir);
  }
  void TearDown() override { fs::remove_all(dir); }
  // Writes the archive as submission<extension>, unpacks it into dir/into; the error, or "" if
  // none.
  std::string unpack(const std::string& bytes, const std::string& extension,
                     const UnpackLimits& limits = {}) {
    const fs::path file = dir / ("submission" + extension);
    write_text_atomic(file, bytes);
    try {
      unpack_archive(file, dir / "into", limits);
      return "";
    } catch (const std::runtime_error& e) {
      return e.what();
    }
  }
  fs::path dir;
};

TEST(Archive, AZipReadsBackTheSameFilesModesAndBytesEveryTime) {
  const std::vector<ArchiveEntry> files = {{"setup.sh", "#!/bin/sh\n", true},
                                           {"labs/01/a.cpp", std::string(100000, 'x'), false},
                                           {"empty", "", false}};
  const std::string zip = make_zip(files);
  EXPECT_EQ(make_zip(files), zip)
      << "the same files must give the same zip (fixed dates and owners)";
  const std::vector<ArchiveEntry> back = read_archive(zip);  // libarchive checks each CRC
  ASSERT_EQ(back.size(), files.size());
  for (std::size_t i = 0; i < files.size(); ++i) {
    EXPECT_EQ(back[i].name, files[i].name);
    EXPECT_EQ(back[i].data, files[i].data) << files[i].name;
    EXPECT_EQ(back[i].executable, files[i].executable) << files[i].name;
  }
  EXPECT_LT(zip.size(), 10000u) << "the entries are compressed";
  const fs::path p =
      fs::temp_directory_path() / ("workbook-zip-" + std::to_string(getpid()) + ".zip");
  write_text_atomic(p, zip);
  if (access("/usr/bin/unzip", X_OK) == 0) {
    EXPECT_EQ(std::system(("/usr/bin/unzip -tq " + p.string() + " > /dev/null").c_str()), 0)
        << "unzip -t rejects the archive";
  }
  fs::remove(p);
}

TEST(Archive, KnowsTheSubmissionFormatsByName) {
  for (const char* n :
       {"a.zip", "a.tar", "a.tar.gz", "a.tgz", "a.tar.xz", "a.tar.bz2", "/x/y/dana.tar.gz"})
    EXPECT_TRUE(is_archive_name(n)) << n;
  for (const char* n : {"a.cpp", "zip", ".zip", "a.gz", "a.rar", "a.zip.txt"})
    EXPECT_FALSE(is_archive_name(n)) << n;
}

TEST(Archive, AMalformedArchiveIsAnErrorNotAnEmptyList) {
  EXPECT_THROW(read_archive("PK\x03\x04 this is not a zip"), std::runtime_error);
}

TEST_F(Unpack, EveryFormatUnpacksFilesFoldersModesAndInsideLinks) {
  const std::vector<Raw> entries = {
      {.name = "./labs/", .type = AE_IFDIR, .perm = 0755},
      {.name = "./labs/01/vector_ops.cpp", .data = "int relu;\n"},
      {.name = "run.sh", .data = "#!/bin/sh\n", .perm = 0700},
      {.name = "labs/01/alias.cpp", .type = AE_IFLNK, .symlink = "vector_ops.cpp"}};
  for (const auto& [kind, extension] :
       std::vector<std::pair<Kind, std::string>>{{Kind::zip, ".zip"},
                                                 {Kind::tar, ".tar"},
                                                 {Kind::tar_gz, ".tar.gz"},
                                                 {Kind::tar_gz, ".tgz"},
                                                 {Kind::tar_xz, ".tar.xz"},
                                                 {Kind::tar_bz2, ".tar.bz2"}}) {
    fs::remove_all(dir / "into");
    ASSERT_EQ(unpack(archive_of(entries, kind), extension), "") << extension;
    EXPECT_EQ(read_text(dir / "into" / "labs" / "01" / "vector_ops.cpp"), "int relu;\n")
        << extension;
    EXPECT_EQ(fs::status(dir / "into" / "run.sh").permissions() & fs::perms::all, fs::perms(0755))
        << extension;
    EXPECT_EQ(
        fs::status(dir / "into" / "labs" / "01" / "vector_ops.cpp").permissions() & fs::perms::all,
        fs::perms(0644));
    EXPECT_TRUE(fs::is_symlink(dir / "into" / "labs" / "01" / "alias.cpp")) << extension;
    EXPECT_EQ(read_text(dir / "into" / "labs" / "01" / "alias.cpp"), "int relu;\n") << extension;
  }
}

TEST_F(Unpack, TheGradersOwnZipUnpacksToTheSameFiles) {
  const std::vector<ArchiveEntry> files = {{"setup.sh", "#!/bin/sh\n", true},
                                           {"labs/01/a.cpp", "int a;\n", false}};
  ASSERT_EQ(unpack(make_zip(files), ".zip"), "");
  EXPECT_EQ(read_text(dir / "into" / "labs" / "01" / "a.cpp"), "int a;\n");
  EXPECT_EQ(read_text(dir / "into" / "setup.sh"), "#!/bin/sh\n");
  EXPECT_NE(fs::status(dir / "into" / "setup.sh").permissions() & fs::perms::owner_exec,
            fs::perms::none);
}

TEST_F(Unpack, RefusesAbsolutePathsAndDotDotWithoutWritingOutside) {
  for (const char* name : {"/tmp/evil", "../evil", "labs/../../evil", "labs/.."}) {
    const std::string error = unpack(archive_of({{.name = name, .data = "x"}}, Kind::tar), ".tar");
    EXPECT_THAT(error, HasSubstr("submission.tar: '" + std::string(name) +
                                 "' has an absolute path or a '..'"))
        << name;
  }
  EXPECT_FALSE(fs::exists(dir / "evil"));
  const std::string error =
      unpack(archive_of({{.name = "../evil", .data = "x"}}, Kind::zip), ".zip");
  EXPECT_THAT(error, HasSubstr("submission.zip: '../evil' has an absolute path or a '..'"));
  EXPECT_FALSE(fs::exists(dir / "evil"));
}

TEST_F(Unpack, RefusesSymbolicLinksThatCouldLeadOutside) {
  for (const char* target : {"/etc", "../outside", "sub/../../outside", ".."}) {
    const std::string error = unpack(
        archive_of({{.name = "link", .type = AE_IFLNK, .symlink = target}}, Kind::tar_gz), ".tgz");
    EXPECT_THAT(error, HasSubstr("submission.tgz: 'link' is a symbolic link to '" +
                                 std::string(target) + "'"))
        << target;
    EXPECT_FALSE(fs::exists(fs::symlink_status(dir / "into" / "link"))) << target;
  }
}

TEST_F(Unpack, RefusesHardLinksToAnythingButAFileUnpackedBefore) {
  for (const char* target : {"/etc/passwd", "../outside", "not_yet"}) {
    const std::string error =
        unpack(archive_of({{.name = "h", .hardlink = target}}, Kind::tar), ".tar");
    EXPECT_THAT(error,
                HasSubstr("submission.tar: 'h' is a hard link to '" + std::string(target) + "'"))
        << target;
  }
  fs::remove_all(dir / "into");
  ASSERT_EQ(unpack(archive_of({{.name = "a.cpp", .data = "int a;\n"},
                               {.name = "b.cpp", .hardlink = "a.cpp"}},
                              Kind::tar),
                   ".tar"),
            "");
  EXPECT_EQ(read_text(dir / "into" / "b.cpp"), "int a;\n");
}

TEST_F(Unpack, RefusesDevicesFifosAndSockets) {
  for (const mode_t type : {AE_IFCHR, AE_IFBLK, AE_IFIFO}) {
    const std::string error =
        unpack(archive_of({{.name = "dev", .type = type}}, Kind::tar), ".tar");
    EXPECT_THAT(error, HasSubstr("submission.tar: 'dev' is a device, fifo or socket")) << type;
    EXPECT_FALSE(fs::exists(fs::symlink_status(dir / "into" / "dev")));
  }
}

TEST_F(Unpack, StopsAtTheLimitsOfEntriesAndBytes) {
  std::vector<Raw> many;
  for (int i = 0; i < 5; ++i) many.push_back({.name = "f" + std::to_string(i), .data = "x"});
  EXPECT_THAT(unpack(archive_of(many, Kind::zip), ".zip", {.max_bytes = 1 << 20, .max_entries = 4}),
              HasSubstr("submission.zip: 'f4' is past the limit of 4 entries"));
  // A small archive that unpacks to much more (a zip bomb): refused while unpacking.
  const std::string bomb =
      archive_of({{.name = "zeros", .data = std::string(8 << 20, '\0')}}, Kind::tar_gz);
  EXPECT_LT(bomb.size(), 100000u);
  EXPECT_THAT(
      unpack(bomb, ".tar.gz", {.max_bytes = 1 << 20, .max_entries = 10}),
      HasSubstr(
          "submission.tar.gz: 'zeros' takes the unpacked size past the limit of 1048576 bytes"));
  EXPECT_LE(fs::file_size(dir / "into" / "zeros"), 1u << 20);
}

TEST_F(Unpack, ADamagedArchiveIsAnErrorNamingIt) {
  EXPECT_THAT(unpack("this is not an archive at all", ".tar.gz"), HasSubstr("submission.tar.gz: "));
  const std::string zip = make_zip({{"a.cpp", std::string(5000, 'a'), false}});
  EXPECT_THAT(unpack(zip.substr(0, zip.size() / 2), ".zip"), HasSubstr("submission.zip: "));
}

}  // namespace
