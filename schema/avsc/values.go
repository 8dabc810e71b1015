package avsc

import (
	"fmt"
	"math/big"
)

var bigTen = big.NewInt(10)

// Unscaled returns r × 10^scale, the unscaled integer of a decimal value
// as goavro decodes it (*big.Rat). It fails if r has more fractional
// digits than scale, which would lose precision.
func Unscaled(r *big.Rat, scale int) (*big.Int, error) {
	if r == nil {
		return nil, fmt.Errorf("nil decimal")
	}
	pow := new(big.Int).Exp(bigTen, big.NewInt(int64(scale)), nil)
	num := new(big.Int).Mul(r.Num(), pow)
	q, m := new(big.Int).QuoRem(num, r.Denom(), new(big.Int))
	if m.Sign() != 0 {
		return nil, fmt.Errorf("decimal %s has more than %d fractional digits", r.RatString(), scale)
	}
	return q, nil
}

// DecimalString formats an unscaled integer with scale fractional digits,
// exactly: (-1230, 2) → "-12.30", (5, 3) → "0.005", (42, 0) → "42".
func DecimalString(unscaled *big.Int, scale int) string {
	digits := new(big.Int).Abs(unscaled).String()
	sign := ""
	if unscaled.Sign() < 0 {
		sign = "-"
	}
	if scale == 0 {
		return sign + digits
	}
	if len(digits) <= scale {
		digits = fmt.Sprintf("%0*s", scale+1, digits)
	}
	cut := len(digits) - scale
	return sign + digits[:cut] + "." + digits[cut:]
}
