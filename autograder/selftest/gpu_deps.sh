#!/usr/bin/env bash
# Gathers, from this Debian 12 machine's packages, what a GPU machine without apt needs to build and
# run the labs and the grader, into the ignored folder .deps/ (carry it to that machine):
#   - header-only libraries and their CMake packages: xtensor, xtl, xsimd, nlohmann-json, CLI11;
#   - GoogleTest's static libraries, headers and CMake package;
#   - libarchive (the grader reads submissions with it), Nettle (its SHA-256: cache keys, file
#     hashes) and cmark-gfm with its extensions (the grader renders its reports' Markdown with it):
#     their headers, and the shared libraries with every library they load, in .deps/runtime/
#     (installed there by `gpu_deps.sh --install`);
#   - GNU patch (it loads only the C runtime), in .deps/bin/: the self-test's submissions are stored
#     as patches (selftest/materialise.cmake), and a machine without apt may lack it;
#   - with --baselines, the benches' library baselines too: OpenBLAS and oneDNN, their headers, and
#     their shared libraries with what they load, compressed (.deps/runtime/baselines.tar.xz, 8 MB
#     instead of 80: a device run carries at most 64 MiB).
# On the GPU machine, from the repository root:
#   autograder/selftest/gpu_deps.sh --install [.deps] # copies into /usr/local/lib the runtime
#                                                  # libraries the machine lacks (and unpacks the
#                                                  # baselines' there), then ldconfig
#   export CMAKE_PREFIX_PATH=$PWD/.deps            # so that every configure (the grader's too) finds them
# The copy mirrors /usr's layout, so the packages' own relative paths resolve inside it.
set -euo pipefail
dest=$PWD/.deps
lib=lib/x86_64-linux-gnu

if [ "${1:-}" = "--install" ]; then
  dest=${2:-$dest}
  # Only what is missing: the machine's own copy of a library stays the one its programs use.
  # (`ldconfig -p` lists each library as "<TAB>name (flags) => path": compare the first field.)
  have=$(ldconfig -p | awk 'NR > 1 {print $1}')
  unpacked=$(mktemp -d)
  if [ -f "$dest/runtime/baselines.tar.xz" ]; then
    tar -xJf "$dest/runtime/baselines.tar.xz" -C "$unpacked"
  fi
  for so in "$dest"/runtime/*.so* "$unpacked"/*; do
    [ -e "$so" ] || continue
    name=$(basename "$so")
    if ! grep -qxF "$name" <<<"$have"; then
      # Copy beside it, then rename: a library in use (cp itself loads libacl) is never truncated.
      cp -L "$so" "/usr/local/lib/.$name.tmp"
      mv -f "/usr/local/lib/.$name.tmp" "/usr/local/lib/$name"
      echo "gpu_deps: installed $name"
    fi
  done
  # The names the linker looks for (find_library), for the baselines this machine did not have.
  for name in openblas dnnl; do
    so=$(ls /usr/local/lib/lib$name.so.* 2>/dev/null | head -1 || true)
    [ -n "$so" ] && [ ! -e "/usr/local/lib/lib$name.so" ] && ln -s "$(basename "$so")" "/usr/local/lib/lib$name.so"
  done
  rm -rf "$unpacked"
  ldconfig
  exit 0
fi
baselines=false
[ "${1:-}" = "--baselines" ] && baselines=true

rm -rf "$dest"
mkdir -p "$dest/include" "$dest/$lib/cmake" "$dest/share/cmake" "$dest/runtime" "$dest/bin"
cp /usr/bin/patch "$dest/bin/"
for d in xtensor xtl xsimd nlohmann CLI gtest gmock; do cp -r "/usr/include/$d" "$dest/include/"; done
cp /usr/include/archive.h /usr/include/archive_entry.h "$dest/include/"
cp -r /usr/include/nettle "$dest/include/"  # nettle-dev; found by cmake/FindNettle.cmake
cp /usr/include/cmark-gfm*.h "$dest/include/"  # Debian ships no CMake package: cmake/FindCmarkGfm.cmake
for d in xtensor xsimd GTest; do cp -r "/usr/$lib/cmake/$d" "$dest/$lib/cmake/"; done
for d in xtl nlohmann_json CLI11; do cp -r "/usr/share/cmake/$d" "$dest/share/cmake/"; done
cp /usr/$lib/libgtest*.a /usr/$lib/libgmock*.a "$dest/$lib/"
# libarchive and what it loads, except the C and C++ runtimes (the machine has its own, newer ones).
# copy_with_dependencies LIBRARY FOLDER: the library and every library it loads into FOLDER.
copy_with_dependencies() {
  cp -L "$1" "$2/"
  ldd "$1" | awk '$3 ~ /^\// {print $3}' |
    grep -vE '/(libc|libm|libstdc\+\+|libgcc_s|ld-linux[^/]*)\.so' | xargs -I{} cp -L {} "$2/"
}
copy_with_dependencies "/usr/$lib/libarchive.so.13" "$dest/runtime"
ln -s ../../runtime/libarchive.so.13 "$dest/$lib/libarchive.so"
ln -s ../runtime/libarchive.so.13 "$dest/lib/libarchive.so"
# Nettle: libarchive loads it, so it is there already; it loads only the C runtime. The name the
# linker seeks, for the grader's own SHA-256.
[ -e "$dest/runtime/libnettle.so.8" ] || cp -L "/usr/$lib/libnettle.so.8" "$dest/runtime/"
ln -s ../../runtime/libnettle.so.8 "$dest/$lib/libnettle.so"
ln -s ../runtime/libnettle.so.8 "$dest/lib/libnettle.so"
# cmark-gfm's extensions load its core: both land in runtime/, each with the name the linker seeks.
copy_with_dependencies "$(ls /usr/$lib/libcmark-gfm-extensions.so.0.* | head -1)" "$dest/runtime"
for name in cmark-gfm cmark-gfm-extensions; do
  so=$(basename "$(ls "$dest"/runtime/lib$name.so.0.* | head -1)")
  ln -s "../../runtime/$so" "$dest/$lib/lib$name.so"
  ln -s "../runtime/$so" "$dest/lib/lib$name.so"
done
if $baselines; then
  # OpenBLAS (Debian's pthread build) and oneDNN: headers beside the others, libraries compressed.
  mkdir -p "$dest/include/openblas"
  cp -L /usr/include/$(basename "$lib")/openblas-pthread/*.h "$dest/include/openblas/"
  cp /usr/include/dnnl*.h /usr/include/dnnl*.hpp "$dest/include/"
  [ -d /usr/include/oneapi ] && cp -r /usr/include/oneapi "$dest/include/"
  libs=$(mktemp -d)
  for so in "/usr/$lib/openblas-pthread/libopenblas.so.0" "/usr/$lib/libdnnl.so.2"; do
    copy_with_dependencies "$so" "$libs"
  done
  tar -cJf "$dest/runtime/baselines.tar.xz" -C "$libs" .
  rm -rf "$libs"
fi
# The project's .gitignore lists /.deps/ already: nothing to add to git's own exclude file.
du -sh "$dest"
