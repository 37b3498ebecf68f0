package tree

// This test runs in the module internal/golden builds from this case, with
// hotkey_gen.go.golden as hotkey_gen.go.

import (
	"reflect"
	"testing"
)

func sampleNode() *Node {
	leaf := &Node{ID: 3, Label: "leaf"}
	return &Node{
		ID:       1,
		Label:    "root",
		Next:     &Node{ID: 2, Label: "next", Children: []*Node{leaf}},
		Children: []*Node{{ID: 4, Label: "child"}, nil},
		ByName:   map[string]Node{"n": {ID: 5, Next: &Node{ID: 6}}},
		Chain:    List[int]{Value: 1, Next: &List[int]{Value: 2, Next: &List[int]{Value: 3}}},
	}
}

func TestCloneRecursiveTypes(t *testing.T) {
	orig := sampleNode()
	c := cloneNode(orig)
	if !reflect.DeepEqual(c, orig) {
		t.Fatal("clone differs from the original")
	}
	c.Next.Children[0].Label = "x"
	c.Children[0].Label = "x"
	c.ByName["n"].Next.ID = 0
	c.Chain.Next.Next.Value = 0
	if !reflect.DeepEqual(orig, sampleNode()) {
		t.Fatalf("changing the clone changed the original: %+v", orig)
	}

	d := &Dept{Code: "eng", Staff: []Employee{{Name: "a", Dept: &Dept{Code: "ops"}}}}
	cd := cloneDept(d)
	cd.Staff[0].Dept.Code = "x"
	cd.Staff[0].Name = "x"
	if d.Staff[0].Dept.Code != "ops" || d.Staff[0].Name != "a" {
		t.Fatalf("changing the clone changed the original: %+v", d)
	}
}
