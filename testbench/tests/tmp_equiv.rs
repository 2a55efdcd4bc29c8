use hw::generate::committed_tops;
#[test]
fn time_all() {
    let want: Vec<String> = std::env::var("TOPS").unwrap().split(',').map(str::to_string).collect();
    for t in committed_tops().into_iter().filter(|t| want.contains(&t.name())) {
        let g = t.build().unwrap();
        let dir = std::env::temp_dir().join(format!("tmpeq-{}", g.name()));
        let t0 = std::time::Instant::now();
        let r = testbench::equiv::prove_clean(&g, &dir);
        eprintln!("EQUIV {} {:?} {:.1}s", g.name(), r.as_ref().err().map(|e| e.chars().take(300).collect::<String>()), t0.elapsed().as_secs_f64());
    }
}
