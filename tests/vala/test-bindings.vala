// The Vala binding itself: Atomr-1.metadata and the owned string-array
// getters.  Compiled without -w: valac's C must not warn (the project
// builds with -Werror).
class AddActor : Atomr.Actor {
    public void add (Atomr.Buffer buf, float value, AsyncReadyCallback cb) {
        var op = new Atomr.Operation (this, "add", null, null, cb);
        op.read (buf);
        op.write (buf);
        op.set_enqueue_func ((op) => {
            float* x = (float*) op.get_address (buf);
            for (uint64 i = 0; i < buf.get_n_elements (); i++)
                x[i] += value;
            return true;
        });
        op.submit ();
    }
}

int main (string[] args) {
    Test.init (ref args);

    Test.add_func ("/vala/strv-getters", () => {
        var options = new Atomr.CompileOptions ();
        options.add_include_path ("/opt/a").add_include_path ("/opt/b");
        options.add_name_expression ("k<float>");
        string[] paths = options.get_include_paths ();
        assert (paths.length == 2);
        assert (paths[0] == "/opt/a" && paths[1] == "/opt/b");
        string[] exprs = options.get_name_expressions ();
        assert (exprs.length == 1 && exprs[0] == "k<float>");
    });

    Test.add_func ("/vala/cancellable-defaults-to-null", () => {
        var device = new Atomr.Device.mock ();
        try {
            var buf = new Atomr.Buffer (device, Atomr.Dtype.F32, 4);
            buf.fill_sync (1.5);
            assert (buf.download_sync ().get_size () == 16);
        } catch (GLib.Error e) {
            error ("%s", e.message);
        }
    });

    Test.add_func ("/vala/actor-in-vala", () => {
        var device = new Atomr.Device.mock ();
        try {
            var actor = (AddActor) GLib.Initable.new (typeof (AddActor), null, "device", device);
            var buf = new Atomr.Buffer (device, Atomr.Dtype.F32, 4);
            buf.fill_sync (1.0);
            AsyncResult? result = null;
            actor.add (buf, 2.5f, (obj, res) => { result = res; });
            while (result == null)
                MainContext.default ().iteration (true);
            assert (Atomr.Operation.finish_boolean (actor, result, null));
            unowned uint8[] data = buf.download_sync ().get_data ();
            float* v = (float*) data;
            for (int i = 0; i < 4; i++)
                assert (v[i] == 3.5f);
        } catch (GLib.Error e) {
            error ("%s", e.message);
        }
    });

    return Test.run ();
}
