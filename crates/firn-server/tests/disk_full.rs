//! A full disk gets an error, never a crash and never a lost acknowledged
//! write. Runs firn on a 32 MB tmpfs. Mounting it needs root (as in CI):
//! a test that cannot set up its full disk fails, it never passes
//! vacuously.

use firn_testkit::{Conn, R};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

struct Mount(PathBuf);

impl Drop for Mount {
    fn drop(&mut self) {
        let _ = Command::new("umount").arg("-l").arg(&self.0).status();
    }
}

struct Firn(Child);

impl Drop for Firn {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .expect("free port")
}

fn start(dir: &Path, port: u16) -> Firn {
    let child = Command::new(env!("CARGO_BIN_EXE_firn"))
        .args([
            "--port",
            &port.to_string(),
            "--bind",
            "127.0.0.1",
            "--maxmemory",
            "16mb",
        ])
        .arg("--dir")
        .arg(dir)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("spawn firn");
    let firn = Firn(child);
    let deadline = Instant::now() + Duration::from_secs(30);
    while Instant::now() < deadline {
        if std::net::TcpStream::connect(("127.0.0.1", port)).is_ok() {
            return firn;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    panic!("firn did not start");
}

fn is_root() -> bool {
    Command::new("id")
        .arg("-u")
        .output()
        .map(|o| o.stdout.starts_with(b"0\n"))
        .unwrap_or(false)
}

#[test]
fn full_disk_refuses_writes_keeps_reads_and_loses_nothing_acknowledged() {
    let root = tempfile::tempdir().expect("tempdir");
    let mnt = root.path().join("mnt");
    std::fs::create_dir_all(&mnt).expect("mkdir");
    if !is_root()
        || !Command::new("mount")
            .args(["-t", "tmpfs", "-o", "size=32m", "tmpfs"])
            .arg(&mnt)
            .status()
            .map(|s| s.success())
            .unwrap_or(false)
    {
        panic!("cannot mount a 32 MB tmpfs for the full disk (needs root and mount(8))");
    }
    let _mount = Mount(mnt.clone());
    let filler = mnt.join("filler");
    std::fs::write(&filler, vec![0u8; 6 << 20]).expect("filler");
    let data = mnt.join("data");
    let port = free_port();
    let firn = start(&data, port);

    let value = vec![b'v'; 60_000];
    let mut c = Conn::connect(port);
    let mut acked = 0usize;
    let mut refused = false;
    for i in 0..1000 {
        c.send(&[b"SET", format!("k{i}").as_bytes(), &value]);
        match c.try_read_reply() {
            Ok((_, R::Simple(ok))) if ok == "OK" => acked = i + 1,
            _ => {
                refused = true;
                break;
            }
        }
    }
    assert!(acked > 10 && refused, "acked {acked}, refused {refused}");

    // The server is up: reads work, writes get an error.
    let mut other = Conn::connect(port);
    assert_eq!(other.cmd(&["PING"]), R::Simple("PONG".into()));
    assert_eq!(other.cmd(&["STRLEN", "k0"]), R::Int(60_000));
    let refused_write = other.cmd(&["SET", "x", "y"]);
    let text = refused_write.error_text().unwrap_or_default().to_string();
    assert!(text.starts_with("MISCONF"), "{}", refused_write.render());

    // Free space and restart: every acknowledged write is there.
    drop(firn);
    std::fs::remove_file(&filler).expect("remove filler");
    let _firn = start(&data, port);
    let mut c = Conn::connect(port);
    for i in 0..acked {
        assert_eq!(
            c.cmd(&["STRLEN", &format!("k{i}")]),
            R::Int(60_000),
            "k{i} of {acked}"
        );
    }
    assert_eq!(c.cmd(&["SET", "after", "restart"]), R::Simple("OK".into()));
}
