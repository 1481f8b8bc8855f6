//! The two big buffers of a session read from a file: its text and its
//! entries. Each is allocated once, at its size, and on Linux the kernel is
//! asked to back it with transparent huge pages: a big session's buffers are
//! fresh memory, which the kernel otherwise hands out (and zeroes) one 4 KiB
//! page at a time, a page fault each, and those faults were a large part of
//! the time an open took (measured in `benches/README.md`, "Opening a
//! session"). The advice changes how pages are backed, never what they hold;
//! where huge pages are off (`never`) or unknown, it is refused and nothing
//! changes. (Where the kernel's `defrag` setting is `madvise`, its default, a
//! fault in advised memory may compact memory to find a huge page; when none
//! is found it takes small pages, as without the advice.)
//!
//! Mapping the file instead would spare the copy too, but a map reads
//! whatever the file holds later: a file truncated by another process would
//! kill this one (`SIGBUS`), and [`Session::save`](super::Session::save)
//! rewrites the very file the spans point into.

use std::io::Read;
use std::path::Path;

/// Buffers smaller than this are left as the allocator gives them.
const HUGE_FROM: usize = 8 << 20;

/// The size of a transparent huge page (x86-64, and ARM64 with 4 KiB pages).
#[cfg(target_os = "linux")]
const HUGE_PAGE: usize = 2 << 20;

/// Asks the kernel to back the spare capacity of `buf` (what it will be
/// filled with) with huge pages, when it is big enough to be worth it.
pub(crate) fn advise_huge<T>(buf: &mut Vec<T>) {
    let spare = (buf.capacity() - buf.len()).saturating_mul(std::mem::size_of::<T>());
    if spare < HUGE_FROM {
        return;
    }
    #[cfg(target_os = "linux")]
    {
        let start = buf.spare_capacity_mut().as_mut_ptr() as usize;
        // Only whole huge pages inside the buffer: the advice then covers
        // no byte of any other allocation.
        let from = start.next_multiple_of(HUGE_PAGE);
        let to = (start + spare) & !(HUGE_PAGE - 1);
        if to > from {
            // SAFETY: `from..to` lies inside `buf`'s allocation, which `buf`
            // owns. `MADV_HUGEPAGE` only sets how the kernel backs those pages
            // (it reads and writes no memory); a refusal is harmless, so its
            // error is dropped.
            let _ = unsafe {
                rustix::mm::madvise(
                    from as *mut std::ffi::c_void,
                    to - from,
                    rustix::mm::Advice::LinuxHugepage,
                )
            };
        }
    }
}

/// `bytes` copied into a buffer of their size (backed by huge pages when
/// big).
pub(crate) fn copy(bytes: &[u8]) -> Vec<u8> {
    let mut text = Vec::with_capacity(bytes.len());
    advise_huge(&mut text);
    text.extend_from_slice(bytes);
    text
}

/// The bytes of the file at `path`, as [`std::fs::read`] gives them, read
/// into a buffer of the file's size (backed by huge pages when big).
pub(crate) fn read_file(path: &Path) -> std::io::Result<Vec<u8>> {
    let mut file = std::fs::File::open(path)?;
    // The size is a hint: a file that grows while it is read is read whole.
    let size = file
        .metadata()
        .map(|m| usize::try_from(m.len()).unwrap_or(0))
        .unwrap_or(0);
    let mut text = Vec::new();
    // One byte more, so the read that finds the end needs no room.
    if text.try_reserve_exact(size.saturating_add(1)).is_ok() {
        advise_huge(&mut text);
    }
    file.read_to_end(&mut text)?;
    Ok(text)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn buffers_hold_what_they_were_given() {
        // Big enough to be advised.
        let bytes: Vec<u8> = (0..HUGE_FROM + 12345).map(|i| (i % 251) as u8).collect();
        assert_eq!(copy(&bytes), bytes);
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("big");
        std::fs::write(&path, &bytes).unwrap();
        assert_eq!(read_file(&path).unwrap(), bytes);
        std::fs::write(&path, b"small").unwrap();
        assert_eq!(read_file(&path).unwrap(), b"small");
        assert!(read_file(&dir.path().join("none")).is_err());
        let mut empty: Vec<u64> = Vec::new();
        advise_huge(&mut empty);
        assert!(empty.is_empty());
    }
}
