//! Whether the binary under test was laid out by a script that still matches it. The script
//! (`rpc-server/hot-functions.ld`) names functions by their mangled names; a change that renames
//! many (a module moved, a dependency or the toolchain updated), or new code that runs at start,
//! leaves them where the compiler put them, spread over the rest of the code, which costs
//! megabytes of resident memory at ready without any build or test noticing. What shows it is
//! the program's code resident at ready beyond the hot section's size: with a fresh script that
//! is little more than the libraries' own start and the fault-around windows at the section's
//! edges. The `ready` section prints it beside its figures.

use std::path::Path;

use crate::stats::Row;

/// Above this, the figures measure a stale layout, not the code.
const FRESH_KIB: u64 = 1024;

/// The row for an agent `pid` running `binary`, ready and idle.
pub fn row(binary: &Path, pid: u32) -> anyhow::Result<Row> {
    let hot_kib = hot_section_size(&std::fs::read(binary)?)? / 1024;
    let resident_kib = resident_code_kib(pid, binary)?;
    let beyond = resident_kib.saturating_sub(hot_kib);
    let verdict = if beyond <= FRESH_KIB { "" } else { " (stale: run `bash bench/run.sh layout`)" };
    Ok(Row::single(
        "layout: code resident at ready beyond the hot section",
        format!("{:.1} MiB of {:.1} MiB{verdict}", beyond as f64 / 1024.0, resident_kib as f64 / 1024.0),
        format!("≤ {:.0} MiB", FRESH_KIB as f64 / 1024.0),
    ))
}

/// The resident KiB of the executable mappings of `binary` in process `pid`.
fn resident_code_kib(pid: u32, binary: &Path) -> anyhow::Result<u64> {
    let maps = std::fs::read_to_string(format!("/proc/{pid}/smaps"))?;
    let binary = std::fs::canonicalize(binary)?;
    let (mut in_code, mut resident) = (false, 0);
    for line in maps.lines() {
        let fields: Vec<&str> = line.split_whitespace().collect();
        if fields.first().is_some_and(|range| range.contains('-') && !range.ends_with(':')) {
            in_code = fields.get(1).is_some_and(|mode| mode.contains('x'))
                && fields.get(5).is_some_and(|path| Path::new(path) == binary);
        } else if in_code && fields.first() == Some(&"Rss:") {
            resident += fields.get(1).and_then(|kib| kib.parse::<u64>().ok()).unwrap_or(0);
        }
    }
    Ok(resident)
}

/// What this needs of an ELF64 section header: its name and where its bytes are.
struct Section {
    name: u32,
    offset: u64,
    size: u64,
}

/// The size of `.text.larik_hot`; 0 when the binary has no such section (not laid out).
fn hot_section_size(elf: &[u8]) -> anyhow::Result<u64> {
    anyhow::ensure!(elf.get(..4) == Some(b"\x7fELF".as_slice()) && elf.get(4) == Some(&2), "not a 64-bit ELF file");
    let sections_at = read_u64(elf, 0x28)? as usize;
    let (header_size, count, names_index) =
        (read_u16(elf, 0x3A)? as usize, read_u16(elf, 0x3C)? as usize, read_u16(elf, 0x3E)? as usize);
    let sections: Vec<Section> =
        (0..count).map(|index| section(elf, sections_at + index * header_size)).collect::<anyhow::Result<_>>()?;
    let names = sections.get(names_index).ok_or_else(|| anyhow::anyhow!("no section names"))?;
    Ok(sections
        .iter()
        .find(|section| c_string(elf, names.offset as usize + section.name as usize) == Some(".text.larik_hot"))
        .map_or(0, |hot| hot.size))
}

fn section(elf: &[u8], at: usize) -> anyhow::Result<Section> {
    Ok(Section { name: read_u32(elf, at)?, offset: read_u64(elf, at + 0x18)?, size: read_u64(elf, at + 0x20)? })
}

fn c_string(elf: &[u8], at: usize) -> Option<&str> {
    let rest = elf.get(at..)?;
    std::str::from_utf8(&rest[..rest.iter().position(|byte| *byte == 0)?]).ok()
}

fn read_u16(elf: &[u8], at: usize) -> anyhow::Result<u16> {
    Ok(u16::from_le_bytes(bytes(elf, at)?))
}

fn read_u32(elf: &[u8], at: usize) -> anyhow::Result<u32> {
    Ok(u32::from_le_bytes(bytes(elf, at)?))
}

fn read_u64(elf: &[u8], at: usize) -> anyhow::Result<u64> {
    Ok(u64::from_le_bytes(bytes(elf, at)?))
}

fn bytes<const N: usize>(elf: &[u8], at: usize) -> anyhow::Result<[u8; N]> {
    elf.get(at..at + N)
        .and_then(|slice| slice.try_into().ok())
        .ok_or_else(|| anyhow::anyhow!("the ELF file ends before offset {at}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_bench_binary_itself_has_no_hot_section() {
        let own = std::fs::read(std::env::current_exe().unwrap()).unwrap();
        assert_eq!(hot_section_size(&own).unwrap(), 0);
        assert!(hot_section_size(b"#!/bin/sh\n").is_err());
    }
}
