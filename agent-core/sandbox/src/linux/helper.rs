//! The sandbox helper: `larik __sandbox ... -- bash -c LINE`, the process that confines itself
//! and then becomes the command. It runs before the binary starts any thread, so it may fork
//! and change namespaces freely.
//!
//! In order:
//! 1. enter new user and mount namespaces (and a network namespace unless the network is fully
//!    open); with the proxy, bring that namespace's loopback up, listen there and fork the
//!    carrier of its connections ([`bridge`]);
//! 2. take a shared lock on each stand-in, so it outlives the agent if the agent is killed; then
//!    enter a new PID namespace;
//! 3. mount the project roots and the parents of protected paths onto themselves (a mount point
//!    cannot be renamed or removed), then each protected path onto itself read-only, the paths
//!    settings hide (`hiding`), and `/dev/null` over the sockets of services that would run a
//!    program outside the sandbox;
//! 4. fork: the child is the first process of the new PID namespace, so everything the command
//!    leaves behind dies with it (a daemon cannot outlive the stand-ins it relies on); it
//!    mounts that namespace's own `/proc`, applies Landlock (writes only in the writable roots)
//!    and, unless the network is fully open, a seccomp filter on sockets ([`seccomp`]), then
//!    executes the command with the proxy's environment;
//! 5. the helper waits and ends as the command ended (the carrier dies with it).
//!
//! Landlock also stops a confined process from mounting or unmounting, so the command cannot
//! undo step 3. Any step that fails ends the helper with a message and exit code 126 before
//! the command runs: nothing runs with less confinement than asked for.

pub mod bridge;
mod hiding;

use std::ffi::CString;
use std::os::fd::{AsRawFd, OwnedFd};
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};

use landlock::{
    ABI, Access, AccessFs, AccessNet, NetPort, Ruleset, RulesetAttr, RulesetCreatedAttr, RulesetStatus,
    path_beneath_rules,
};

use super::SIMULATE_ENV;
use super::seccomp;
use crate::network::{HTTP_PORT, SOCKS_PORT, proxy_environment};
use crate::plan::{Plan, SERVICE_SOCKETS, USER_SERVICE_SOCKETS, WRITABLE_DEVICES};
use crate::probe::{fail, report};
use crate::{SetupError, stand_in};

/// Runs the helper with the arguments after its subcommand name; returns the exit code (the
/// command's, or [`SETUP_FAILED`](crate::plan::SETUP_FAILED)). Only the forked child executes
/// the command.
pub(crate) fn run(args: &[String]) -> i32 {
    let plan = match Plan::parse(args) {
        Ok(plan) => plan,
        Err(error) => return fail(&error.to_string()),
    };
    let locks = match confine(&plan) {
        Ok(locks) => locks,
        Err(error) => return fail(&error),
    };
    let code = run_confined(&plan, |plan| {
        let environment = if plan.proxy.is_some() { proxy_environment(HTTP_PORT, SOCKS_PORT) } else { Vec::new() };
        let error = exec(&plan.command, environment);
        report(&format!("could not run {}: {error}", plan.command[0]));
        127
    });
    drop(locks);
    code
}

/// Steps 1 to 3, in the calling process. The returned locks must live until the command ends.
pub(super) fn confine(plan: &Plan) -> Result<Vec<std::fs::File>, String> {
    enter_namespaces(plan.network)?;
    // Before the PID namespace: a process that entered one can start no thread, and the
    // carrier is better outside the command's namespace anyway. Before the locks: the carrier
    // must not hold a stand-in, which would outlive the command for as long as it lingers.
    if let Some(socket) = &plan.proxy {
        bridge::start(socket)?;
    }
    let locks = plan
        .stand_ins
        .iter()
        .map(|path| stand_in::lock_shared(path).map_err(|error| format!("{}: {error}", path.display())))
        .collect::<Result<Vec<_>, _>>()?;
    enter_pid_namespace()?;
    mount_private_root()?;
    for path in &plan.pinned {
        bind_onto_itself(path, false)?;
    }
    for path in plan.read_only.iter().chain(&plan.stand_ins) {
        bind_onto_itself(path, true)?;
    }
    for path in &plan.hidden {
        hiding::hide(path, &plan.readable)?;
    }
    mask_service_sockets()?;
    // The working directory was entered before the mounts, so it still points into the mount
    // underneath them; entering it again by name lands on top, where the protections are.
    let cwd = std::env::current_dir().map_err(|error| format!("the working directory is gone: {error}"))?;
    std::env::set_current_dir(&cwd).map_err(|error| format!("cannot enter {}: {error}", cwd.display()))?;
    Ok(locks)
}

/// Steps 4 and 5: forks, confines the child further and runs `body` in it; returns the child's
/// exit code, or ends this process by the signal that ended the child.
pub(super) fn run_confined(plan: &Plan, body: impl FnOnce(&Plan) -> i32) -> i32 {
    // The helper holds the write end of this pipe while it lives: the child, which cannot see
    // its parent from inside the new PID namespace, learns from the closed pipe that the helper
    // died before the child could ask for the death signal.
    let mut alive = [0; 2];
    // SAFETY: `alive` is a valid two-int out-array; both ends close on exec.
    if unsafe { libc::pipe2(alive.as_mut_ptr(), libc::O_CLOEXEC) } == -1 {
        return fail(&format!("pipe: {}", std::io::Error::last_os_error()));
    }
    // SAFETY: the helper is single-threaded (it runs before the binary starts any thread), so
    // the child may allocate and run ordinary code after the fork.
    let child = unsafe { libc::fork() };
    if child < 0 {
        return fail(&format!("fork: {}", std::io::Error::last_os_error()));
    }
    if child == 0 {
        // SAFETY: prctl with PR_SET_PDEATHSIG only sets the signal this process gets when its
        // parent dies: if the helper is killed, the command and its PID namespace go with it.
        // Then a poll without waiting tells whether the helper died before that.
        let helper_gone = unsafe {
            libc::close(alive[1]);
            libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL);
            let mut read_end = libc::pollfd { fd: alive[0], events: libc::POLLIN, revents: 0 };
            libc::poll(&mut read_end, 1, 0) == 1 && read_end.revents & libc::POLLHUP != 0
        };
        if helper_gone {
            std::process::exit(128 + libc::SIGKILL);
        }
        mount_own_proc();
        let code = match restrict(plan) {
            Ok(()) => body(plan),
            Err(error) => fail(&error.to_string()),
        };
        std::process::exit(code);
    }
    // SAFETY: closes the helper's copy of the read end, which only the child needs.
    unsafe { libc::close(alive[0]) };
    wait_for(child)
}

pub(super) fn wait_for(child: libc::pid_t) -> i32 {
    let mut status = 0;
    loop {
        // SAFETY: waits for our own child; `status` is a valid out-pointer.
        let waited = unsafe { libc::waitpid(child, &mut status, 0) };
        if waited == child {
            break;
        }
        if std::io::Error::last_os_error().kind() != std::io::ErrorKind::Interrupted {
            return fail("lost track of the command");
        }
    }
    if libc::WIFSIGNALED(status) {
        let signal = libc::WTERMSIG(status);
        // SAFETY: restores the default action and re-raises the child's signal on ourselves, so
        // whoever waits for the helper sees the command killed by that signal.
        unsafe {
            libc::signal(signal, libc::SIG_DFL);
            libc::kill(libc::getpid(), signal);
        }
        return 128 + signal;
    }
    libc::WEXITSTATUS(status)
}

fn simulated(step: &str) -> bool {
    std::env::var(SIMULATE_ENV).is_ok_and(|value| value.split(',').any(|simulated| simulated == step))
}

fn enter_namespaces(network: bool) -> Result<(), String> {
    if simulated("no-namespaces") {
        return Err("user namespaces are not available (simulated)".into());
    }
    // SAFETY: plain getters.
    let (uid, gid) = unsafe { (libc::getuid(), libc::getgid()) };
    let mut flags = libc::CLONE_NEWUSER | libc::CLONE_NEWNS;
    if !network {
        flags |= libc::CLONE_NEWNET;
    }
    // SAFETY: unshare changes only this process's namespaces.
    if unsafe { libc::unshare(flags) } != 0 {
        return Err(format!(
            "cannot create the sandbox's namespaces: {} (user namespaces may be disabled)",
            std::io::Error::last_os_error()
        ));
    }
    // Inside, the user keeps their own ids, so files keep their owners.
    let write = |file: &str, text: String| std::fs::write(file, text).map_err(|error| format!("{file}: {error}"));
    write("/proc/self/setgroups", "deny".into())?;
    write("/proc/self/uid_map", format!("{uid} {uid} 1"))?;
    write("/proc/self/gid_map", format!("{gid} {gid} 1"))
}

/// The PID namespace the command's processes are born into (the helper itself stays outside).
fn enter_pid_namespace() -> Result<(), String> {
    // SAFETY: unshare changes only this process's namespaces.
    if unsafe { libc::unshare(libc::CLONE_NEWPID) } != 0 {
        return Err(format!("cannot create the sandbox's PID namespace: {}", std::io::Error::last_os_error()));
    }
    Ok(())
}

fn mount_private_root() -> Result<(), String> {
    // Nothing mounted here may reach the user's own mount namespace.
    mount(None, Path::new("/"), libc::MS_REC | libc::MS_PRIVATE)
        .map_err(|error| format!("making mounts private: {error}"))
}

/// Mounts `path` onto itself (read-only if asked). The path is opened without following
/// symlinks and mounted through its descriptor, so a symlink swapped in cannot redirect it.
fn bind_onto_itself(path: &Path, read_only: bool) -> Result<(), String> {
    let fail = |error: &dyn std::fmt::Display| format!("cannot protect {}: {error}", path.display());
    let handle: OwnedFd = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_PATH | libc::O_NOFOLLOW | libc::O_CLOEXEC)
        .open(path)
        .map_err(|error| fail(&error))?
        .into();
    // SAFETY: `stat` is a plain out-struct; the descriptor is ours.
    let mut stat: libc::stat = unsafe { std::mem::zeroed() };
    if unsafe { libc::fstat(handle.as_raw_fd(), &mut stat) } != 0 {
        return Err(fail(&std::io::Error::last_os_error()));
    }
    if stat.st_mode & libc::S_IFMT == libc::S_IFLNK {
        return Err(fail(&"it is a symbolic link, which the sandbox cannot hold in place"));
    }
    let through = PathBuf::from(format!("/proc/self/fd/{}", handle.as_raw_fd()));
    mount(Some(&through), &through, libc::MS_BIND | libc::MS_REC).map_err(|error| fail(&error))?;
    if read_only {
        // The remount must repeat the flags the mount already has (nosuid, nodev, ...): inside a
        // user namespace they are locked and dropping one is refused.
        let flags =
            libc::MS_REMOUNT | libc::MS_BIND | libc::MS_RDONLY | inherited_flags(path).map_err(|error| fail(&error))?;
        mount(None, path, flags).map_err(|error| fail(&error))?;
    }
    Ok(())
}

fn inherited_flags(path: &Path) -> std::io::Result<libc::c_ulong> {
    let target = CString::new(path.as_os_str().as_bytes())?;
    // SAFETY: `stat` is a plain out-struct and `target` a valid C string.
    let mut stat: libc::statvfs = unsafe { std::mem::zeroed() };
    if unsafe { libc::statvfs(target.as_ptr(), &mut stat) } != 0 {
        return Err(std::io::Error::last_os_error());
    }
    let pairs = [
        (libc::ST_NOSUID, libc::MS_NOSUID),
        (libc::ST_NODEV, libc::MS_NODEV),
        (libc::ST_NOEXEC, libc::MS_NOEXEC),
        (libc::ST_NOATIME, libc::MS_NOATIME),
        (libc::ST_NODIRATIME, libc::MS_NODIRATIME),
        (libc::ST_RELATIME, libc::MS_RELATIME),
    ];
    Ok(pairs.iter().filter(|(st, _)| stat.f_flag & st != 0).fold(0, |flags, (_, ms)| flags | ms))
}

fn mask_service_sockets() -> Result<(), String> {
    // SAFETY: a plain getter.
    let uid = unsafe { libc::getuid() };
    let runtime = std::env::var_os("XDG_RUNTIME_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(format!("/run/user/{uid}")));
    let sockets =
        SERVICE_SOCKETS.iter().map(PathBuf::from).chain(USER_SERVICE_SOCKETS.iter().map(|name| runtime.join(name)));
    for socket in sockets.filter(|path| path.symlink_metadata().is_ok_and(|meta| !meta.is_dir())) {
        mount(Some(Path::new("/dev/null")), &socket, libc::MS_BIND)
            .map_err(|error| format!("cannot hide {}: {error}", socket.display()))?;
    }
    Ok(())
}

/// A `/proc` of the command's own PID namespace, so `ps`, `kill` and `$$` agree on pids. Where
/// the kernel refuses (a `/proc` partly covered, as in some containers), the system's stays:
/// it shows more, but hides nothing the sandbox relies on.
fn mount_own_proc() {
    let (source, target, kind) = (c"proc", c"/proc", c"proc");
    // SAFETY: constant C strings, no data.
    let result = unsafe {
        libc::mount(
            source.as_ptr(),
            target.as_ptr(),
            kind.as_ptr(),
            libc::MS_NOSUID | libc::MS_NODEV | libc::MS_NOEXEC,
            std::ptr::null(),
        )
    };
    if result != 0 {
        tracing::debug!(error = %std::io::Error::last_os_error(), "the sandbox keeps the system's /proc");
    }
}

fn mount(source: Option<&Path>, target: &Path, flags: libc::c_ulong) -> std::io::Result<()> {
    let source = source.map(|source| CString::new(source.as_os_str().as_bytes())).transpose()?;
    let target = CString::new(target.as_os_str().as_bytes())?;
    // SAFETY: valid C strings (or null for the source), no file system type and no data.
    let result = unsafe {
        libc::mount(
            source.as_ref().map_or(std::ptr::null(), |source| source.as_ptr()),
            target.as_ptr(),
            std::ptr::null(),
            flags,
            std::ptr::null(),
        )
    };
    if result == 0 { Ok(()) } else { Err(std::io::Error::last_os_error()) }
}

/// Landlock (writes only in the writable roots; unless the network is open, no TCP but to the
/// proxy's ports, and no listening without `allowLocalBinding`, where the kernel can tell) and,
/// unless the network is open, the socket filter.
pub(super) fn restrict(plan: &Plan) -> Result<(), SetupError> {
    let abi = super::kernel_support()?;
    if abi < crate::MIN_LANDLOCK_ABI {
        return Err(SetupError::OldLandlock(abi));
    }
    let target = ABI::from(abi.min(5));
    let fail = |error: &dyn std::fmt::Display| SetupError::Landlock(error.to_string());
    let mut ruleset = Ruleset::default().handle_access(AccessFs::from_all(target)).map_err(|error| fail(&error))?;
    // With its own servers, a command connects to ports of its choosing on its own loopback.
    let limit_tcp = !plan.network && !plan.local_binding && abi >= 4;
    if limit_tcp {
        ruleset = ruleset.handle_access(AccessNet::BindTcp | AccessNet::ConnectTcp).map_err(|error| fail(&error))?;
    }
    let mut writable_paths: Vec<&Path> = plan.writable.iter().map(PathBuf::as_path).collect();
    writable_paths.extend(WRITABLE_DEVICES.iter().map(Path::new).filter(|path| path.exists()));
    let proxy_ports = if limit_tcp && plan.proxy.is_some() { vec![HTTP_PORT, SOCKS_PORT] } else { Vec::new() };
    let status = ruleset
        .create()
        .map_err(|error| fail(&error))?
        .add_rules(
            proxy_ports
                .into_iter()
                .map(|port| Ok::<_, landlock::RulesetError>(NetPort::new(port, AccessNet::ConnectTcp))),
        )
        .map_err(|error| fail(&error))?
        .add_rules(path_beneath_rules(["/"], AccessFs::from_read(target)))
        .map_err(|error| fail(&error))?
        .add_rules(path_beneath_rules(writable_paths, AccessFs::from_all(target)))
        .map_err(|error| fail(&error))?
        .restrict_self()
        .map_err(|error| fail(&error))?;
    if status.ruleset != RulesetStatus::FullyEnforced {
        return Err(SetupError::PartlyEnforced);
    }
    if !plan.network {
        seccomp::restrict_sockets(seccomp::Sockets {
            tcp: plan.proxy.is_some() || plan.local_binding,
            unix: plan.unix_sockets,
        })?;
    }
    Ok(())
}

fn exec(command: &[String], environment: Vec<(String, String)>) -> std::io::Error {
    use std::os::unix::process::CommandExt;
    std::process::Command::new(&command[0]).args(&command[1..]).envs(environment).exec()
}
