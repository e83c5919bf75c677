// Command lattigo runs the CKKS workloads of triskel's `bench workloads`
// with Lattigo v6, one goroutine, and prints one line per
// workload: "name wall_median_us cpu_median_us max_abs_error" (compute stage only: the inputs
// are encoded and encrypted outside the timed region, as triskel's compute
// stage), by wall time and by process CPU time. The algorithms are the ones triskel runs: a rotation tree for the
// slot sum, the hybrid diagonal method for the dense layer.
package main

import (
	"flag"
	"fmt"
	"math"
	"os"
	"runtime"
	"sort"
	"strings"
	"syscall"
	"time"

	"github.com/tuneinsight/lattigo/v6/core/rlwe"
	"github.com/tuneinsight/lattigo/v6/schemes/ckks"
)

// The shape: Q {60, 40, 40}, P {60}, scale 2^40 (one digit per prime).
func params(logN int) ckks.Parameters {
	p, err := ckks.NewParametersFromLiteral(ckks.ParametersLiteral{
		LogN:            logN,
		LogQ:            []int{60, 40, 40},
		LogP:            []int{60},
		LogDefaultScale: 40,
	})
	check(err)
	return p
}

func check(err error) {
	if err != nil {
		fmt.Fprintln(os.Stderr, "error:", err)
		os.Exit(1)
	}
}

// The deterministic inputs in [-1, 1] of triskel's workloads.
func inputs(seed, n int) []float64 {
	v := make([]float64, n)
	for i := range v {
		x := float64(i+1)*0.6180339887 + float64(seed)*0.4142135623
		v[i] = (x-math.Floor(x))*2 - 1
	}
	return v
}

// setup holds one parameter set's keys and tools.
type setup struct {
	params ckks.Parameters
	kgen   *rlwe.KeyGenerator
	sk     *rlwe.SecretKey
	enc    *rlwe.Encryptor
	dec    *rlwe.Decryptor
	ecd    *ckks.Encoder
}

func newSetup(logN int) *setup {
	p := params(logN)
	kgen := ckks.NewKeyGenerator(p)
	sk, pk := kgen.GenKeyPairNew()
	return &setup{p, kgen, sk, ckks.NewEncryptor(p, pk), ckks.NewDecryptor(p, sk), ckks.NewEncoder(p)}
}

// evaluator with a relinearization key and Galois keys for `steps`.
func (s *setup) evaluator(relin bool, steps []int) *ckks.Evaluator {
	var rlk *rlwe.RelinearizationKey
	if relin {
		rlk = s.kgen.GenRelinearizationKeyNew(s.sk)
	}
	gks := s.kgen.GenGaloisKeysNew(s.params.GaloisElements(steps), s.sk)
	return ckks.NewEvaluator(s.params, rlwe.NewMemEvaluationKeySet(rlk, gks...))
}

// encrypt encodes `v` (periodically over all slots when shorter) at the top level, default scale.
func (s *setup) encrypt(v []float64) *rlwe.Ciphertext {
	slots := s.params.MaxSlots()
	full := make([]float64, slots)
	for i := range full {
		full[i] = v[i%len(v)]
	}
	pt := ckks.NewPlaintext(s.params, s.params.MaxLevel())
	check(s.ecd.Encode(full, pt))
	ct, err := s.enc.EncryptNew(pt)
	check(err)
	return ct
}

func (s *setup) decrypt(ct *rlwe.Ciphertext) []float64 {
	out := make([]float64, s.params.MaxSlots())
	check(s.ecd.Decode(s.dec.DecryptNew(ct), out))
	return out
}

func maxError(got, want []float64) float64 {
	e := 0.0
	for i := range want {
		e = math.Max(e, math.Abs(got[i]-want[i]))
	}
	return e
}

// cpuMicros is the process's CPU time (user + system, every thread: the
// garbage collector's share counts) in microseconds.
func cpuMicros() float64 {
	var ru syscall.Rusage
	check(syscall.Getrusage(syscall.RUSAGE_SELF, &ru))
	return float64(ru.Utime.Nano()+ru.Stime.Nano()) / 1e3
}

func median(v []float64) float64 {
	sort.Float64s(v)
	n := len(v)
	if n%2 == 0 {
		return (v[n/2-1] + v[n/2]) / 2
	}
	return v[n/2]
}

// measure times `runs` calls of compute (after one warm-up) and checks the
// last result against want.
func measure(name string, runs int, s *setup, compute func() *rlwe.Ciphertext, want []float64) {
	compute()
	wall := make([]float64, runs)
	cpu := make([]float64, runs)
	var out *rlwe.Ciphertext
	for i := range wall {
		t, c := time.Now(), cpuMicros()
		out = compute()
		cpu[i] = cpuMicros() - c
		wall[i] = float64(time.Since(t).Nanoseconds()) / 1e3
	}
	fmt.Printf("%s %.1f %.1f %.3g\n", name, median(wall), median(cpu), maxError(s.decrypt(out), want))
}

var slotSumSteps = []int{1, 2, 4, 8, 16, 32}

// slotSum adds 64 slots by the tree of 6 rotations (in place).
func slotSum(eval *ckks.Evaluator, acc, tmp *rlwe.Ciphertext) {
	for _, k := range slotSumSteps {
		check(eval.Rotate(acc, k, tmp))
		check(eval.Add(acc, tmp, acc))
	}
}

func mulPipeline(name string, s *setup, runs int) {
	eval := s.evaluator(true, nil)
	slots := s.params.MaxSlots()
	a, b := inputs(1, slots), inputs(2, slots)
	want := make([]float64, slots)
	for i := range want {
		want[i] = a[i] * b[i]
	}
	ca, cb := s.encrypt(a), s.encrypt(b)
	prod := ckks.NewCiphertext(s.params, 1, s.params.MaxLevel())
	out := ckks.NewCiphertext(s.params, 1, s.params.MaxLevel())
	measure(name, runs, s, func() *rlwe.Ciphertext {
		check(eval.MulRelin(ca, cb, prod))
		check(eval.Rescale(prod, out))
		return out
	}, want)
}

func square(s *setup, runs int) {
	eval := s.evaluator(true, nil)
	slots := s.params.MaxSlots()
	a := inputs(3, slots)
	want := make([]float64, slots)
	for i := range want {
		want[i] = a[i] * a[i]
	}
	ca := s.encrypt(a)
	prod := ckks.NewCiphertext(s.params, 1, s.params.MaxLevel())
	out := ckks.NewCiphertext(s.params, 1, s.params.MaxLevel())
	measure("ckks.poly_x2", runs, s, func() *rlwe.Ciphertext {
		check(eval.MulRelin(ca, ca, prod))
		check(eval.Rescale(prod, out))
		return out
	}, want)
}

func rotate(s *setup, runs int) {
	eval := s.evaluator(false, []int{1})
	slots := s.params.MaxSlots()
	a := inputs(4, slots)
	want := make([]float64, slots)
	for i := range want {
		want[i] = a[(i+1)%slots]
	}
	ca := s.encrypt(a)
	out := ckks.NewCiphertext(s.params, 1, s.params.MaxLevel())
	measure("ckks.rotate", runs, s, func() *rlwe.Ciphertext {
		check(eval.Rotate(ca, 1, out))
		return out
	}, want)
}

func sum64(s *setup, runs int) {
	eval := s.evaluator(false, slotSumSteps)
	a := inputs(5, 64)
	want := 0.0
	for _, x := range a {
		want += x
	}
	// 64 values, then zeros (as triskel's workload).
	full := make([]float64, s.params.MaxSlots())
	copy(full, a)
	pt := ckks.NewPlaintext(s.params, s.params.MaxLevel())
	check(s.ecd.Encode(full, pt))
	ca, err := s.enc.EncryptNew(pt)
	check(err)
	acc := ckks.NewCiphertext(s.params, 1, s.params.MaxLevel())
	tmp := ckks.NewCiphertext(s.params, 1, s.params.MaxLevel())
	measure("ckks.slot_sum64", runs, s, func() *rlwe.Ciphertext {
		acc.Copy(ca)
		slotSum(eval, acc, tmp)
		return acc
	}, []float64{want})
}

func dot64(s *setup, runs int) {
	eval := s.evaluator(true, slotSumSteps)
	a, b := inputs(6, 64), inputs(7, 64)
	want := 0.0
	for i := range a {
		want += a[i] * b[i]
	}
	pad := func(v []float64) *rlwe.Ciphertext {
		full := make([]float64, s.params.MaxSlots())
		copy(full, v)
		pt := ckks.NewPlaintext(s.params, s.params.MaxLevel())
		check(s.ecd.Encode(full, pt))
		ct, err := s.enc.EncryptNew(pt)
		check(err)
		return ct
	}
	ca, cb := pad(a), pad(b)
	prod := ckks.NewCiphertext(s.params, 1, s.params.MaxLevel())
	acc := ckks.NewCiphertext(s.params, 1, s.params.MaxLevel())
	tmp := ckks.NewCiphertext(s.params, 1, s.params.MaxLevel()-1)
	measure("ckks.dot64", runs, s, func() *rlwe.Ciphertext {
		check(eval.MulRelin(ca, cb, prod))
		check(eval.Rescale(prod, acc))
		slotSum(eval, acc, tmp)
		return acc
	}, []float64{want})
}

// dense64x4: the hybrid diagonal method of triskel's LinearTransform for a
// 4 x 64 matrix: 4 extended diagonals (encoded at scale q_l), rotations by
// 1, 2, 3 hoisted, one rescale, then a fold by rotations 4, 8, 16, 32.
func dense64x4(s *setup, runs int) {
	const dim, rows = 64, 4
	w := make([][]float64, rows)
	for r := range w {
		w[r] = inputs(100+r, dim)
		for c := range w[r] {
			w[r][c] *= 0.5
		}
	}
	x := inputs(9, dim)
	want := make([]float64, rows)
	for r := range want {
		for c := 0; c < dim; c++ {
			want[r] += w[r][c] * x[c]
		}
	}
	level := s.params.MaxLevel()
	q := float64(s.params.Q()[level])
	slots := s.params.MaxSlots()
	diags := make([]*rlwe.Plaintext, rows)
	for i := range diags {
		u := make([]float64, slots)
		for sl := range u {
			u[sl] = w[sl%rows][(sl%dim+i)%dim]
		}
		pt := ckks.NewPlaintext(s.params, level)
		pt.Scale = rlwe.NewScale(q)
		check(s.ecd.Encode(u, pt))
		diags[i] = pt
	}
	folds := []int{4, 8, 16, 32}
	eval := s.evaluator(false, append([]int{1, 2, 3}, folds...))
	cx := s.encrypt(x)
	rotated := map[int]*rlwe.Ciphertext{}
	for _, k := range []int{1, 2, 3} {
		rotated[k] = ckks.NewCiphertext(s.params, 1, level)
	}
	sum := ckks.NewCiphertext(s.params, 1, level)
	prod := ckks.NewCiphertext(s.params, 1, level)
	acc := ckks.NewCiphertext(s.params, 1, level)
	tmp := ckks.NewCiphertext(s.params, 1, level-1)
	measure("ckks.dense_64x4", runs, s, func() *rlwe.Ciphertext {
		check(eval.RotateHoisted(cx, []int{1, 2, 3}, rotated))
		check(eval.Mul(cx, diags[0], sum))
		for i := 1; i < rows; i++ {
			check(eval.Mul(rotated[i], diags[i], prod))
			check(eval.Add(sum, prod, sum))
		}
		check(eval.Rescale(sum, acc))
		for _, k := range folds {
			check(eval.Rotate(acc, k, tmp))
			check(eval.Add(acc, tmp, acc))
		}
		return acc
	}, want)
}

func main() {
	runs := flag.Int("runs", 10, "timed runs per workload (after one warm-up)")
	only := flag.String("only", "", "comma-separated workload names (default: all)")
	flag.Parse()
	runtime.GOMAXPROCS(1)
	want := func(name string) bool {
		if *only == "" {
			return true
		}
		for _, n := range strings.Split(*only, ",") {
			if n == name {
				return true
			}
		}
		return false
	}
	s := newSetup(13)
	all := []struct {
		name string
		run  func()
	}{
		{"ckks.mul_pipeline", func() { mulPipeline("ckks.mul_pipeline", s, *runs) }},
		{"ckks.rotate", func() { rotate(s, *runs) }},
		{"ckks.slot_sum64", func() { sum64(s, *runs) }},
		{"ckks.dot64", func() { dot64(s, *runs) }},
		{"ckks.poly_x2", func() { square(s, *runs) }},
		{"ckks.dense_64x4", func() { dense64x4(s, *runs) }},
		{"ckks.mul_pipeline_16384", func() { mulPipeline("ckks.mul_pipeline_16384", newSetup(14), *runs) }},
	}
	for _, w := range all {
		if want(w.name) {
			w.run()
		}
	}
}
