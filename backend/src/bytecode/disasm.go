package bytecode

import (
	"fmt"
	"strconv"
	"strings"
)

// Disassemble returns a human-readable listing of p: a header with the
// inputs, constants and sizes, then one line per instruction with its index,
// mnemonic, operand and a comment naming what the operand refers to.
//
// The listing is meant for people; its layout may change between releases.
func Disassemble(p *Program) string {
	var b strings.Builder
	fmt.Fprintf(&b, "vexl bytecode v%d\n", FormatVersion)
	fmt.Fprintf(&b, "inputs:    %s\n", strings.Join(p.Inputs, ", "))
	fmt.Fprintf(&b, "temps:     %d\n", p.NumTemps)
	fmt.Fprintf(&b, "max stack: %d\n", p.MaxStack)
	fmt.Fprintf(&b, "consts:    %d\n", len(p.Consts))
	for i, c := range p.Consts {
		fmt.Fprintf(&b, "  c%-4d %s\n", i, FormatFloat(c))
	}
	fmt.Fprintf(&b, "code:      %d instructions\n", len(p.Code))
	for pc, in := range p.Code {
		line := fmt.Sprintf("  %04d  %-6s", pc, in.Op)
		comment := ""
		switch in.Op {
		case OpInput:
			line += fmt.Sprintf(" %d", in.Arg)
			if int(in.Arg) < len(p.Inputs) {
				comment = p.Inputs[in.Arg]
			}
		case OpConst:
			line += fmt.Sprintf(" %d", in.Arg)
			if int(in.Arg) < len(p.Consts) {
				comment = FormatFloat(p.Consts[in.Arg])
			}
		case OpLoad, OpStore:
			line += fmt.Sprintf(" %d", in.Arg)
			comment = fmt.Sprintf("t%d", in.Arg)
		}
		if comment != "" {
			line = fmt.Sprintf("%-20s ; %s", line, comment)
		}
		b.WriteString(strings.TrimRight(line, " "))
		b.WriteByte('\n')
	}
	return b.String()
}

// FormatFloat formats a constant the shortest way that reads back exactly.
func FormatFloat(f float64) string {
	return strconv.FormatFloat(f, 'g', -1, 64)
}
