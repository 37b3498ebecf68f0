//go:build race

package golden

// raceDetector is set when this test binary was built with -race: the
// generated module's tests are built with it too, as make test promises
// of every test but the checker's.
const raceDetector = true
