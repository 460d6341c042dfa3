package agent

import (
	"fmt"
	"path/filepath"
	"reflect"

	"github.com/headroom-agent/headroom/internal/yamlconf"
)

// maxTaskList bounds what LoadTaskList reads: a fleet's list of tasks.
const maxTaskList = 16 << 20

// A task list is one file for a whole fleet: every container reads it and
// runs the task at its own index (a Kubernetes indexed Job's
// JOB_COMPLETION_INDEX, say), so one manifest serves every agent.
//
//	tasks:
//	  - file: shop-sofa.yaml        # a task file, relative to this list
//	  - name: oak-desk              # or a task written out in place
//	    start_url: https://shop.example/
//	    goal: Put the oak desk in the cart.
type taskList struct {
	Tasks []listEntry `yaml:"tasks"`
}

type listEntry struct {
	Task `yaml:",inline"`
	Path string `yaml:"file"`
}

// LoadTaskList reads and checks a task list. Every problem is reported as
// file:line: field: what is wrong, in the list or in a task file it names.
func LoadTaskList(path string) ([]*Task, error) {
	data, err := yamlconf.ReadFile(path, maxTaskList)
	if err != nil {
		return nil, err
	}
	return ParseTaskList(path, data)
}

// ParseTaskList decodes and checks a task list held in memory; file names
// it in messages and is where the paths in it start from.
func ParseTaskList(file string, data []byte) ([]*Task, error) {
	var l taskList
	doc, err := yamlconf.Decode(file, data, &l)
	if err != nil {
		return nil, nameField(err)
	}
	if len(l.Tasks) == 0 {
		return nil, doc.Errorf("tasks", "a task list needs tasks: a list of task files (- file: NAME.yaml) or tasks written out")
	}
	dir := filepath.Dir(file)
	out := make([]*Task, len(l.Tasks))
	seen := map[string]int{}
	for i := range l.Tasks {
		e := &l.Tasks[i]
		at := fmt.Sprintf("tasks[%d]", i)
		var t *Task
		if e.Path != "" {
			if !reflect.DeepEqual(e.Task, Task{}) {
				return nil, doc.Errorf(at, "an entry is a task file or a task written out, not both: move the fields into %s or drop file", e.Path)
			}
			t, err = LoadTask(resolve(dir, e.Path))
			if err != nil {
				return nil, doc.Errorf(at+".file", "%v", err)
			}
		} else {
			if doc.Has(at + ".file") {
				return nil, doc.Errorf(at+".file", "file names a task file: give its path")
			}
			t = &e.Task
			if err := t.check(doc.Sub(at)); err != nil {
				return nil, err
			}
			t.File = file
			t.Replay = resolve(dir, t.Replay)
			t.Cassette = resolve(dir, t.Cassette)
		}
		// Results, reports and sessions are told apart by name.
		if j, dup := seen[t.Name]; dup {
			return nil, doc.Errorf(at, "task %q is also tasks[%d]: each task of a list has a name of its own", t.Name, j)
		}
		seen[t.Name] = i
		out[i] = t
	}
	return out, nil
}
