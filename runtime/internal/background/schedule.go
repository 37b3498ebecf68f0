package background

import "time"

// Schedule says when each periodic job of a Cache is next due. One
// goroutine ticks at Period, the finest of their periods, and runs
// whatever is due, so background work costs one goroutine and one timer
// per Cache, and a goroutine per job that waits on Redis while it runs
// (see Job).
type Schedule struct {
	// Period is the tick's: a slot of the detection window, or a job's
	// interval when that is shorter.
	Period time.Duration
	// The selector's passes, the refresh and the monitor line.
	Promote, Demote, Refresh, Monitor Interval
}

// New returns the schedule, as of now, of jobs run every promote, demote,
// refresh and monitor (0 or less: never), ticking every slot at least.
func New(slot time.Duration, now time.Time, promote, demote, refresh, monitor time.Duration) Schedule {
	s := Schedule{Period: slot}
	for _, d := range []time.Duration{promote, demote, refresh, monitor} {
		if d > 0 {
			s.Period = min(s.Period, d)
		}
	}
	s.Promote = Interval{every: promote, next: now.Add(promote)}
	s.Demote = Interval{every: demote, next: now.Add(demote)}
	s.Refresh = Interval{every: refresh, next: now.Add(refresh)}
	s.Monitor = Interval{every: monitor, next: now.Add(monitor)}
	return s
}

// Due reports whether the job of i, one of s's, is due at now, and if so
// schedules its next run.
//
// A job is due a little early rather than a whole tick late: ticks arrive
// with jitter, and a tick a microsecond before the job's time would
// otherwise push it to the next one, doubling a refresh interval that
// equals the tick period.
func (s *Schedule) Due(i *Interval, now time.Time) bool {
	if i.every <= 0 || now.Add(s.Period/2).Before(i.next) {
		return false
	}
	i.next = i.next.Add(i.every)
	if i.next.Before(now) { // fell behind: do not run it twice in a row
		i.next = now.Add(i.every)
	}
	return true
}
