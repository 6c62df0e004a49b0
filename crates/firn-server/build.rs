// Compiles the long double shim used by INCRBYFLOAT (see csrc/longdouble.c).
fn main() {
    println!("cargo:rerun-if-changed=csrc/longdouble.c");
    cc::Build::new()
        .file("csrc/longdouble.c")
        .warnings(true)
        .compile("firn_longdouble");
}
