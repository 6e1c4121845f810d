#![no_main]
libfuzzer_sys::fuzz_target!(|data: &[u8]| larik_fuzz::definitions(data));
