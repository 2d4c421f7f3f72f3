package terminal

import (
	"errors"
	"os"
	"os/exec"
	"syscall"
	"time"
	"unsafe"

	"golang.org/x/sys/windows"
)

// Supported says whether this OS can run terminal commands: on Windows,
// each command's tree is a Job Object (spawn), which a timeout, a stop,
// a shutdown and the hub's death end as a whole.
func Supported() error { return nil }

// defaultShell is cmd.exe from the system directory, never one found on
// PATH or in the project.
func defaultShell() string {
	dir, err := windows.GetSystemDirectory()
	if err != nil {
		dir = `C:\Windows\System32`
	}
	return dir + `\cmd.exe`
}

// spawn starts the shell in a new Job Object that only the hub holds a
// handle to (not inheritable), limited with KILL_ON_JOB_CLOSE so the
// hub's death ends the tree. The shell starts suspended, in a process
// group of its own and with no console window, is assigned to the job and
// only then resumed, so nothing it starts can run outside the job.
// Breakaway is not allowed: every descendant stays in the job.
func spawn(s spawnSpec, clock Clock, grace, drain time.Duration) (*proc, error) {
	if dialectOf(s.shell) != dialectCmd {
		// The command line and the guard are cmd.exe's: another shell
		// would run what the guard did not read.
		return nil, errors.New("the terminal's shell on Windows is cmd.exe, not " + s.shell)
	}
	job, err := windows.CreateJobObject(nil, nil)
	if err != nil {
		return nil, err
	}
	var limit windows.JOBOBJECT_EXTENDED_LIMIT_INFORMATION
	limit.BasicLimitInformation.LimitFlags = windows.JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE
	if _, err := windows.SetInformationJobObject(job, windows.JobObjectExtendedLimitInformation,
		uintptr(unsafe.Pointer(&limit)), uint32(unsafe.Sizeof(limit))); err != nil {
		windows.CloseHandle(job)
		return nil, err
	}
	out, outW, err := os.Pipe()
	if err != nil {
		windows.CloseHandle(job)
		return nil, err
	}
	cmd := &exec.Cmd{
		Path:   s.shell,
		Dir:    s.dir,
		Env:    s.env,
		Stdout: outW, // Stdin nil: NUL
		Stderr: outW,
		SysProcAttr: &syscall.SysProcAttr{
			CmdLine:       cmdLine(s.shell, s.command),
			CreationFlags: windows.CREATE_SUSPENDED | windows.CREATE_NEW_PROCESS_GROUP | windows.CREATE_NO_WINDOW,
			HideWindow:    true,
		},
	}
	err = cmd.Start()
	outW.Close()
	if err != nil {
		out.Close()
		windows.CloseHandle(job)
		return nil, err
	}
	pid := cmd.Process.Pid
	fail := func(err error) (*proc, error) {
		cmd.Process.Kill() // still suspended: it ran nothing
		cmd.Wait()
		out.Close()
		windows.CloseHandle(job)
		return nil, err
	}
	// The pid cannot have been reused: cmd.Process holds a handle.
	h, err := windows.OpenProcess(windows.PROCESS_SET_QUOTA|windows.PROCESS_TERMINATE, false, uint32(pid))
	if err != nil {
		return fail(err)
	}
	err = windows.AssignProcessToJobObject(job, h)
	windows.CloseHandle(h)
	if err != nil {
		return fail(err)
	}
	if err := resume(uint32(pid)); err != nil {
		return fail(err)
	}
	return newJobProc(&winJob{job: job, cmd: cmd}, pid, out, s, clock, grace, drain)
}

// resume resumes the threads of a process started suspended (its one
// thread: Go's StartProcess does not hand out the thread handle).
func resume(pid uint32) error {
	snap, err := windows.CreateToolhelp32Snapshot(windows.TH32CS_SNAPTHREAD, 0)
	if err != nil {
		return err
	}
	defer windows.CloseHandle(snap)
	te := windows.ThreadEntry32{Size: uint32(unsafe.Sizeof(windows.ThreadEntry32{}))}
	resumed := false
	for err = windows.Thread32First(snap, &te); err == nil; err = windows.Thread32Next(snap, &te) {
		if te.OwnerProcessID != pid {
			continue
		}
		th, err := windows.OpenThread(windows.THREAD_SUSPEND_RESUME, false, te.ThreadID)
		if err != nil {
			return err
		}
		_, err = windows.ResumeThread(th)
		windows.CloseHandle(th)
		if err != nil {
			return err
		}
		resumed = true
	}
	if !resumed {
		return errors.New("the shell's thread was not found to resume it")
	}
	return nil
}

// winJob is a command's Job Object and its shell.
type winJob struct {
	job windows.Handle
	cmd *exec.Cmd
}

func (j *winJob) waitShell() uint32 {
	j.cmd.Wait()
	if ws, ok := j.cmd.ProcessState.Sys().(syscall.WaitStatus); ok {
		return ws.ExitCode
	}
	return 1
}

func (j *winJob) kill() { windows.TerminateJobObject(j.job, 1) }

// jobAccounting is JOBOBJECT_BASIC_ACCOUNTING_INFORMATION.
type jobAccounting struct {
	TotalUserTime, TotalKernelTime, ThisPeriodTotalUserTime, ThisPeriodTotalKernelTime int64
	TotalPageFaultCount, TotalProcesses, ActiveProcesses, TotalTerminatedProcesses     uint32
}

// jobPoll is how often waitEmpty looks at the job's process count.
const jobPoll = 50 * time.Millisecond

func (j *winJob) waitEmpty(stop <-chan struct{}) bool {
	for {
		var a jobAccounting
		err := windows.QueryInformationJobObject(j.job, windows.JobObjectBasicAccountingInformation,
			uintptr(unsafe.Pointer(&a)), uint32(unsafe.Sizeof(a)), nil)
		if err != nil || a.ActiveProcesses == 0 {
			return true
		}
		select {
		case <-stop:
			return false
		case <-time.After(jobPoll):
		}
	}
}

func (j *winJob) close() { windows.CloseHandle(j.job) }

// forceEndReaper is never reached: every proc here is a job's.
func (p *proc) forceEndReaper() { p.forceEndJob() }
