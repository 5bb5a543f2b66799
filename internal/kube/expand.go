package kube

import "strings"

// expand applies Kubernetes' $(VAR) expansion to s, as the kubelet does for
// command, args and env values: $(NAME) becomes the value of NAME when lookup
// knows it and stays as written when not; $$ is a literal $ (so $$(NAME)
// gives $(NAME)); any other $ is kept. This mirrors
// third_party/forked/golang/expansion in kubernetes/kubernetes.
func expand(s string, lookup func(string) (string, bool)) string {
	if !strings.Contains(s, "$") {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c != '$' || i+1 == len(s) {
			b.WriteByte(c)
			continue
		}
		switch next := s[i+1]; next {
		case '$': // escaped operator
			b.WriteByte('$')
			i++
		case '(':
			end := strings.IndexByte(s[i+2:], ')')
			if end < 0 { // incomplete reference: kept as written
				b.WriteString("$(")
				i++
				continue
			}
			name := s[i+2 : i+2+end]
			if v, ok := lookup(name); ok {
				b.WriteString(v)
			} else {
				b.WriteString("$(" + name + ")")
			}
			i += 2 + end
		default:
			b.WriteByte('$')
			b.WriteByte(next)
			i++
		}
	}
	return b.String()
}
