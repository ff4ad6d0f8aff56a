fn main() {
    let path = std::env::args().nth(1).unwrap();
    let p = mprof_engine::Profile::read(&std::fs::read(path).unwrap()).unwrap();
    for m in &p.modules { println!("{:?}", m); }
    for a in &p.addresses { println!("{:?} {}", a, p.functions[a.func.0 as usize].name); }
}
