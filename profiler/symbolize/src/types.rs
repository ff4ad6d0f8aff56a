//! The main program's user types by size, for the bin table's "types" column: the
//! paper's C bins name the types whose size is the bin size. Read from the DWARF of
//! the executable (or its debug file) when a raw profile is symbolized.

use std::collections::HashMap;
use std::path::Path;

/// Names of the user types (structs, unions, classes and their typedefs) of the
/// program whose DWARF is in `dwarf`, by size in bytes. Names starting with `_` (the C
/// library's internals) are left out; at most three names per size.
pub fn type_names_by_size(dwarf: &Path) -> HashMap<u64, Vec<String>> {
    let mut out: HashMap<u64, Vec<String>> = HashMap::new();
    let Some(data) = crate::debuginfo::map(dwarf) else {
        return out;
    };
    let Ok(file) = object::File::parse(&*data) else {
        return out;
    };
    let _ = collect_types(&file, &mut out);
    for names in out.values_mut() {
        names.sort();
        names.dedup();
        names.truncate(3);
    }
    out
}

fn collect_types(
    file: &object::File<'_>,
    out: &mut HashMap<u64, Vec<String>>,
) -> Result<(), addr2line::gimli::Error> {
    use addr2line::gimli::{self, EndianSlice, RunTimeEndian};
    use object::{Object, ObjectSection};
    use std::borrow::Cow;
    let load = |id: gimli::SectionId| -> Result<Cow<'_, [u8]>, gimli::Error> {
        Ok(file
            .section_by_name(id.name())
            .and_then(|s| s.uncompressed_data().ok())
            .unwrap_or(Cow::Borrowed(&[])))
    };
    let sections = gimli::DwarfSections::load(load)?;
    let dwarf = sections.borrow(|s| EndianSlice::new(s, RunTimeEndian::Little));
    let mut units = dwarf.units();
    while let Some(header) = units.next()? {
        let unit = dwarf.unit(header)?;
        let mut entries = unit.entries();
        while let Some(entry) = entries.next_dfs()? {
            let tag = entry.tag();
            let sized = match tag {
                gimli::DW_TAG_structure_type
                | gimli::DW_TAG_union_type
                | gimli::DW_TAG_class_type => entry
                    .attr_value(gimli::DW_AT_byte_size)
                    .and_then(|v| v.udata_value()),
                gimli::DW_TAG_typedef => match entry.attr_value(gimli::DW_AT_type) {
                    Some(gimli::AttributeValue::UnitRef(offset)) => unit
                        .entry(offset)
                        .ok()
                        .filter(|t| {
                            matches!(
                                t.tag(),
                                gimli::DW_TAG_structure_type
                                    | gimli::DW_TAG_union_type
                                    | gimli::DW_TAG_class_type
                            )
                        })
                        .and_then(|t| t.attr_value(gimli::DW_AT_byte_size))
                        .and_then(|v| v.udata_value()),
                    _ => None,
                },
                _ => None,
            };
            let (Some(size), Some(name)) = (sized, entry.attr_value(gimli::DW_AT_name)) else {
                continue;
            };
            let Ok(name) = dwarf.attr_string(&unit, name) else {
                continue;
            };
            let name = name.to_string_lossy().into_owned();
            if !name.is_empty() && !name.starts_with('_') {
                out.entry(size).or_default().push(name);
            }
        }
    }
    Ok(())
}
