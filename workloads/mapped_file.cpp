#include "workloads/mapped_file.hpp"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "workloads/common/errors.hpp"

namespace gnnbed {
namespace {

class FileDescriptor {
 public:
  explicit FileDescriptor(int fd) : fd_(fd) {}
  ~FileDescriptor() {
    if (fd_ >= 0) close(fd_);
  }
  FileDescriptor(const FileDescriptor&) = delete;
  FileDescriptor& operator=(const FileDescriptor&) = delete;
  int get() const { return fd_; }

 private:
  int fd_;
};

std::string errno_text() { return std::strerror(errno); }

}  // namespace

MappedFile::MappedFile(const std::filesystem::path& path) : file_(path.string()) {
  const FileDescriptor fd(::open(file_.c_str(), O_RDONLY | O_CLOEXEC));
  if (fd.get() < 0) {
    const int error = errno;
    throw InputError(
        file_, 0, "",
        error == ENOENT ? "no such file" : "cannot open: " + std::string(std::strerror(error)));
  }
  struct stat info {};
  if (fstat(fd.get(), &info) != 0) throw InputError(file_, 0, "", "cannot stat: " + errno_text());
  if (!S_ISREG(info.st_mode)) throw InputError(file_, 0, "", "is not a regular file");
  if (info.st_size == 0) throw InputError(file_, 0, "", "file is empty");
  size_bytes_ = static_cast<std::size_t>(info.st_size);
  void* address = mmap(nullptr, size_bytes_, PROT_READ, MAP_PRIVATE, fd.get(), 0);
  if (address == MAP_FAILED) {
    throw SystemError("cannot map " + file_ + " (" + std::to_string(size_bytes_) +
                      " bytes): " + errno_text());
  }
  data_ = static_cast<std::byte*>(address);
}

MappedFile::~MappedFile() {
  if (data_ != nullptr) munmap(data_, size_bytes_);
}

std::shared_ptr<const MappedFile> MappedFile::open(const std::filesystem::path& path) {
  return std::make_shared<const MappedFile>(path);
}

void MappedFile::advise(std::uint64_t offset_bytes, std::uint64_t length_bytes, int advice) const {
  if (offset_bytes >= size_bytes_ || length_bytes == 0) return;
  const auto page = static_cast<std::uint64_t>(sysconf(_SC_PAGESIZE));
  const std::uint64_t begin = offset_bytes / page * page;
  const std::uint64_t end = std::min<std::uint64_t>(offset_bytes + length_bytes, size_bytes_);
  // Only advice: a refusal changes speed, never results, so its return value is ignored.
  madvise(data_ + begin, static_cast<std::size_t>(end - begin), advice);
}

void MappedFile::prefetch(std::uint64_t offset_bytes, std::uint64_t length_bytes) const {
  advise(offset_bytes, length_bytes, MADV_WILLNEED);
}

void MappedFile::expect_random_reads(std::uint64_t offset_bytes, std::uint64_t length_bytes) const {
  advise(offset_bytes, length_bytes, MADV_RANDOM);
}

}  // namespace gnnbed
