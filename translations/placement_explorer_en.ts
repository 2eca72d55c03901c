<?xml version="1.0" encoding="utf-8"?>
<!DOCTYPE TS>
<TS version="2.1" language="en_US">
<context>
    <name>Exports</name>
    <message>
        <location filename="../app/gui/Exports.cpp" line="36"/>
        <source>Cannot write %1: %2</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location filename="../app/gui/Exports.cpp" line="55"/>
        <location filename="../app/gui/Exports.cpp" line="70"/>
        <location filename="../app/gui/Exports.cpp" line="75"/>
        <source>Cannot write %1</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location filename="../app/gui/Exports.cpp" line="102"/>
        <source>There are no run times to export: run the plan first (Run ▸ Run the Plan).</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location filename="../app/gui/Exports.cpp" line="117"/>
        <source>&apos;%1&apos; is not a Relay operator; export a JSON graph instead.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location filename="../app/gui/Exports.cpp" line="127"/>
        <source>Netron annotations need a model read from ONNX; export a JSON graph or the plan report instead.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location filename="../app/gui/Exports.cpp" line="160"/>
        <source>Unknown export &apos;%1&apos;.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location filename="../app/gui/Exports.cpp" line="168"/>
        <source>Image (PNG)…</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location filename="../app/gui/Exports.cpp" line="168"/>
        <source>PNG image (*.png)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location filename="../app/gui/Exports.cpp" line="169"/>
        <source>Vector image (SVG)…</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location filename="../app/gui/Exports.cpp" line="170"/>
        <source>SVG image (*.svg)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location filename="../app/gui/Exports.cpp" line="171"/>
        <source>Relay text with placement…</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location filename="../app/gui/Exports.cpp" line="172"/>
        <source>Relay text (*.relay)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location filename="../app/gui/Exports.cpp" line="173"/>
        <source>JSON graph…</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location filename="../app/gui/Exports.cpp" line="173"/>
        <source>JSON graph (*.json)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location filename="../app/gui/Exports.cpp" line="174"/>
        <source>Plan report (JSON)…</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location filename="../app/gui/Exports.cpp" line="175"/>
        <source>Plan report (*.json)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location filename="../app/gui/Exports.cpp" line="176"/>
        <source>Model Explorer overlay: devices…</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location filename="../app/gui/Exports.cpp" line="177"/>
        <location filename="../app/gui/Exports.cpp" line="179"/>
        <source>Model Explorer node data (*.json)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location filename="../app/gui/Exports.cpp" line="178"/>
        <source>Model Explorer overlay: run times…</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location filename="../app/gui/Exports.cpp" line="181"/>
        <source>Netron: ONNX model annotated with placement and times…</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location filename="../app/gui/Exports.cpp" line="182"/>
        <source>ONNX model (*.onnx)</source>
        <translation type="unfinished"></translation>
    </message>
</context>
<context>
    <name>GraphScene</name>
    <message>
        <location filename="../views/GraphScene.cpp" line="757"/>
        <source>split ⇉ %1</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location filename="../views/GraphScene.cpp" line="761"/>
        <location filename="../views/GraphScene.cpp" line="768"/>
        <source>concat ⇇</source>
        <translation type="unfinished"></translation>
    </message>
</context>
<context>
    <name>HostsRunner</name>
    <message>
        <location filename="../app/gui/HostsRun.cpp" line="165"/>
        <source>%1 compute</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location filename="../app/gui/HostsRun.cpp" line="174"/>
        <source>inputs → %1</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location filename="../app/gui/HostsRun.cpp" line="176"/>
        <source>input %1: %2 ms</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location filename="../app/gui/HostsRun.cpp" line="184"/>
        <location filename="../app/gui/HostsRun.cpp" line="187"/>
        <source>copies %1 → %2</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location filename="../app/gui/HostsRun.cpp" line="192"/>
        <source>copy %1, %2 → %3, %4 bytes: %5 ms</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location filename="../app/gui/HostsRun.cpp" line="205"/>
        <source>waiting for %1</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location filename="../app/gui/HostsRun.cpp" line="206"/>
        <source>idle %1 ms, waiting for %2</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location filename="../app/gui/HostsRun.cpp" line="210"/>
        <source>%1 (%2) on %3 [%4]: %5 ms</source>
        <translation type="unfinished"></translation>
    </message>
</context>
<context>
    <name>LanguageMenu</name>
    <message>
        <location filename="../app/gui/LanguageMenu.cpp" line="15"/>
        <source>&amp;Language</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location filename="../app/gui/LanguageMenu.cpp" line="19"/>
        <source>System Default</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location filename="../app/gui/LanguageMenu.cpp" line="31"/>
        <source>The new language applies when Placement Explorer starts again.</source>
        <translation type="unfinished"></translation>
    </message>
</context>
<context>
    <name>NodeItem</name>
    <message numerus="yes">
        <location filename="../views/NodeItem.cpp" line="203"/>
        <source> (fused, %n more)</source>
        <translation>
            <numerusform> (fused, %n more)</numerusform>
            <numerusform> (fused, %n more)</numerusform>
        </translation>
    </message>
    <message>
        <location filename="../views/NodeItem.cpp" line="214"/>
        <source>fused into %1</source>
        <translation type="unfinished"></translation>
    </message>
</context>
<context>
    <name>NodeMenu</name>
    <message>
        <location filename="../views/NodeMenu.cpp" line="40"/>
        <source>Collapse %1</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location filename="../views/NodeMenu.cpp" line="54"/>
        <source>Pin to</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location filename="../views/NodeMenu.cpp" line="59"/>
        <source>Clear Pin</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location filename="../views/NodeMenu.cpp" line="66"/>
        <source>Split Across Devices…</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location filename="../views/NodeMenu.cpp" line="71"/>
        <source>Remove Split</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location filename="../views/NodeMenu.cpp" line="78"/>
        <source>Expand %1</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location filename="../views/NodeMenu.cpp" line="83"/>
        <source>Collapse</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location filename="../views/NodeMenu.cpp" line="89"/>
        <source>Fit Selection</source>
        <translation type="unfinished"></translation>
    </message>
</context>
<context>
    <name>PlanSummary</name>
    <message numerus="yes">
        <location filename="../views/PlanSummary.cpp" line="53"/>
        <source>%n copy(ies), %1 copied</source>
        <translation>
            <numerusform>%n copy, %1 copied</numerusform>
            <numerusform>%n copies, %1 copied</numerusform>
        </translation>
    </message>
    <message>
        <location filename="../views/PlanSummary.cpp" line="57"/>
        <source>(sizes at %1)</source>
        <translation type="unfinished"></translation>
    </message>
    <message numerus="yes">
        <location filename="../views/PlanSummary.cpp" line="59"/>
        <source>%n region(s) split</source>
        <translation>
            <numerusform>%n region split</numerusform>
            <numerusform>%n regions split</numerusform>
        </translation>
    </message>
    <message numerus="yes">
        <location filename="../views/PlanSummary.cpp" line="62"/>
        <source>pipelined in %n micro-batch(es)</source>
        <translation>
            <numerusform>pipelined in %n micro-batch</numerusform>
            <numerusform>pipelined in %n micro-batches</numerusform>
        </translation>
    </message>
    <message numerus="yes">
        <location filename="../views/PlanSummary.cpp" line="67"/>
        <source>a stream of %n batch(es)</source>
        <translation>
            <numerusform>a stream of %n batch</numerusform>
            <numerusform>a stream of %n batches</numerusform>
        </translation>
    </message>
    <message>
        <location filename="../views/PlanSummary.cpp" line="73"/>
        <source>peak memory: %1</source>
        <translation type="unfinished"></translation>
    </message>
    <message numerus="yes">
        <location filename="../views/PlanSummary.cpp" line="76"/>
        <source>%n conflict(s)</source>
        <translation>
            <numerusform>%n conflict</numerusform>
            <numerusform>%n conflicts</numerusform>
        </translation>
    </message>
    <message>
        <location filename="../views/PlanSummary.cpp" line="78"/>
        <source>predicting…</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location filename="../views/PlanSummary.cpp" line="81"/>
        <source>predicted latency: %1</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location filename="../views/PlanSummary.cpp" line="85"/>
        <source>predicted latency at %2: %1</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location filename="../views/PlanSummary.cpp" line="90"/>
        <source>planned in %1 ms</source>
        <translation type="unfinished"></translation>
    </message>
    <message numerus="yes">
        <location filename="../views/PlanSummary.cpp" line="93"/>
        <source>%n node(s) folded at load</source>
        <translation>
            <numerusform>%n node folded at load</numerusform>
            <numerusform>%n nodes folded at load</numerusform>
        </translation>
    </message>
</context>
<context>
    <name>QObject</name>
    <message>
        <location filename="../views/CopyBadgeItem.cpp" line="26"/>
        <source>device copy %1</source>
        <translation type="unfinished"></translation>
    </message>
    <message numerus="yes">
        <location filename="../views/GroupItem.cpp" line="16"/>
        <source>%1: %n node(s), collapsed (double-click or the context menu expands it)</source>
        <translation>
            <numerusform>%1: %n node, collapsed (double-click or the context menu expands it)</numerusform>
            <numerusform>%1: %n nodes, collapsed (double-click or the context menu expands it)</numerusform>
        </translation>
    </message>
    <message numerus="yes">
        <location filename="../views/FrameItem.cpp" line="14"/>
        <source>%1: %n node(s), open (double-click its title to collapse it)</source>
        <translation>
            <numerusform>%1: %n node, open (double-click its title to collapse it)</numerusform>
            <numerusform>%1: %n nodes, open (double-click its title to collapse it)</numerusform>
        </translation>
    </message>
    <message numerus="yes">
        <location filename="../views/FrameItem.cpp" line="20"/>
        <location filename="../views/GroupItem.cpp" line="88"/>
        <source>%n node(s)</source>
        <translation>
            <numerusform>%n node</numerusform>
            <numerusform>%n nodes</numerusform>
        </translation>
    </message>
    <message numerus="yes">
        <location filename="../views/GroupItem.cpp" line="90"/>
        <source>%n pin(s)</source>
        <translation>
            <numerusform>%n pin</numerusform>
            <numerusform>%n pins</numerusform>
        </translation>
    </message>
</context>
<context>
    <name>RunPanel</name>
    <message>
        <location filename="../app/gui/RunPanel.cpp" line="425"/>
        <source>%1 compute</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location filename="../app/gui/RunPanel.cpp" line="440"/>
        <source>%1 (%2) on %3 [%4]: %5 ms</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location filename="../app/gui/RunPanel.cpp" line="446"/>
        <source>µb%1 %2</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location filename="../app/gui/RunPanel.cpp" line="447"/>
        <source>, micro-batch %1</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location filename="../app/gui/RunPanel.cpp" line="455"/>
        <source>copies %1 → %2</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location filename="../app/gui/RunPanel.cpp" line="462"/>
        <source>copy %1, %2: %3 ms</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location filename="../app/gui/RunPanel.cpp" line="466"/>
        <source>inputs → %1</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location filename="../app/gui/RunPanel.cpp" line="468"/>
        <source>input %1: %2 ms</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location filename="../app/gui/RunPanel.cpp" line="485"/>
        <source>waiting for %1</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location filename="../app/gui/RunPanel.cpp" line="491"/>
        <source>idle %1 ms, waiting for %2</source>
        <translation type="unfinished"></translation>
    </message>
</context>
<context>
    <name>main</name>
    <message>
        <location filename="../app/gui/main.cpp" line="120"/>
        <source>Decide where each operator of a dataflow graph runs on a multi-device machine.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location filename="../app/gui/main.cpp" line="126"/>
        <source>A Relay, ONNX or JSON graph (default: the bundled example).</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location filename="../app/gui/main.cpp" line="130"/>
        <source>Write a PNG of the main window and exit.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location filename="../app/gui/main.cpp" line="134"/>
        <source>Input format: relay, json, onnx or auto.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location filename="../app/gui/main.cpp" line="135"/>
        <source>Virtual devices, NAME:KIND[:mem=SIZE],...</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location filename="../app/gui/main.cpp" line="136"/>
        <source>Where unconstrained work goes.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location filename="../app/gui/main.cpp" line="137"/>
        <source>Where host-only ops run.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location filename="../app/gui/main.cpp" line="138"/>
        <source>Pin NODE=DEVICE (repeatable).</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location filename="../app/gui/main.cpp" line="139"/>
        <source>Pin NODE=DEVICE, result included (repeatable).</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location filename="../app/gui/main.cpp" line="140"/>
        <source>Op rule OP=DEVICE (repeatable).</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location filename="../app/gui/main.cpp" line="141"/>
        <source>Fallback device for ops no rule covers.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location filename="../app/gui/main.cpp" line="143"/>
        <source>Split NODES=DEV[:SHARE],... on the batch (repeatable).</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location filename="../app/gui/main.cpp" line="144"/>
        <source>Planner mode: demand, unify or auto.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location filename="../app/gui/main.cpp" line="146"/>
        <source>Constants on several devices: replicate or copy.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location filename="../app/gui/main.cpp" line="148"/>
        <source>Pipeline the plan in M micro-batches of the batch.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location filename="../app/gui/main.cpp" line="149"/>
        <source>Throughput mode: N batches back to back through the pipeline.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location filename="../app/gui/main.cpp" line="159"/>
        <source>Run the plan before the screenshot: cuda devices on their GPU where this machine has it, the others on the host and virtual CPUs.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location filename="../app/gui/main.cpp" line="164"/>
        <source>Collapse the top-level name scopes into groups.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location filename="../app/gui/main.cpp" line="167"/>
        <source>Open this collapsed name scope as a frame (repeatable; with --screenshot).</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location filename="../app/gui/main.cpp" line="173"/>
        <source>Run the plan under mpirun on N ranks of this machine before the screenshot, the devices on the ranks Run ▸ Run on Hosts proposes.</source>
        <translation type="unfinished"></translation>
    </message>
</context>
<context>
    <name>placer::gui::DeviceDialog</name>
    <message>
        <location filename="../app/gui/DeviceDialog.cpp" line="26"/>
        <location filename="../app/gui/DeviceDialog.cpp" line="207"/>
        <source>Devices</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location filename="../app/gui/DeviceDialog.cpp" line="29"/>
        <source>Virtual devices are what plans name; each runs on a physical device when the plan runs (cpu, vcpuN, cuda:N).</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location filename="../app/gui/DeviceDialog.cpp" line="34"/>
        <source>Name</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location filename="../app/gui/DeviceDialog.cpp" line="34"/>
        <source>Kind</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location filename="../app/gui/DeviceDialog.cpp" line="34"/>
        <source>Memory capacity</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location filename="../app/gui/DeviceDialog.cpp" line="34"/>
        <source>Runs on</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location filename="../app/gui/DeviceDialog.cpp" line="34"/>
        <source>Colour</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location filename="../app/gui/DeviceDialog.cpp" line="39"/>
        <source>Add</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location filename="../app/gui/DeviceDialog.cpp" line="40"/>
        <source>Remove</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location filename="../app/gui/DeviceDialog.cpp" line="48"/>
        <source>Default device (unconstrained work):</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location filename="../app/gui/DeviceDialog.cpp" line="49"/>
        <source>Host device (host-only ops):</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location filename="../app/gui/DeviceDialog.cpp" line="101"/>
        <location filename="../app/gui/DeviceDialog.cpp" line="190"/>
        <source>(automatic)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location filename="../app/gui/DeviceDialog.cpp" line="112"/>
        <source>double-click</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location filename="../app/gui/DeviceDialog.cpp" line="165"/>
        <source>row %1: a device needs a name without spaces, &apos;:&apos;, &apos;,&apos; or &apos;=&apos;</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location filename="../app/gui/DeviceDialog.cpp" line="169"/>
        <source>two devices are called &apos;%1&apos;</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location filename="../app/gui/DeviceDialog.cpp" line="179"/>
        <source>&apos;%1&apos;: memory capacity &apos;%2&apos; is not a size such as 8GiB or 512MB</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location filename="../app/gui/DeviceDialog.cpp" line="194"/>
        <source>a plan needs at least one device</source>
        <translation type="unfinished"></translation>
    </message>
</context>
<context>
    <name>placer::gui::HostsDialog</name>
    <message>
        <location filename="../app/gui/HostsRun.cpp" line="478"/>
        <source>%1 is not a host file (not a regular file of at most 1 MiB)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location filename="../app/gui/HostsRun.cpp" line="485"/>
        <source>Cannot read the host file %1: %2</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location filename="../app/gui/HostsRun.cpp" line="501"/>
        <source>%1, line %2: %3</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location filename="../app/gui/HostsRun.cpp" line="505"/>
        <source>the line starts with &quot;%1&quot;, not a host name</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location filename="../app/gui/HostsRun.cpp" line="522"/>
        <source>&quot;%1&quot; is not slots=N or max_slots=N</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location filename="../app/gui/HostsRun.cpp" line="529"/>
        <source>&quot;%1&quot; is not a number of slots (1 or more)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location filename="../app/gui/HostsRun.cpp" line="548"/>
        <source>%1 names no host</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location filename="../app/gui/HostsRun.cpp" line="553"/>
        <source>Run on Hosts</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location filename="../app/gui/HostsRun.cpp" line="556"/>
        <source>The plan runs under mpirun: one placer process (rank) per slot, each virtual device on the rank and physical device chosen below. Copies between ranks go over MPI. The model file must be readable at the same path on every host.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location filename="../app/gui/HostsRun.cpp" line="563"/>
        <source>This machine</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location filename="../app/gui/HostsRun.cpp" line="566"/>
        <source>Hosts in a file</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location filename="../app/gui/HostsRun.cpp" line="574"/>
        <source>an Open MPI host file: one host a line, slots=N</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location filename="../app/gui/HostsRun.cpp" line="575"/>
        <source>Browse…</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location filename="../app/gui/HostsRun.cpp" line="577"/>
        <source>Host file</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location filename="../app/gui/HostsRun.cpp" line="592"/>
        <source>Ranks:</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location filename="../app/gui/HostsRun.cpp" line="601"/>
        <source>Device</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location filename="../app/gui/HostsRun.cpp" line="601"/>
        <source>Kind</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location filename="../app/gui/HostsRun.cpp" line="601"/>
        <source>Rank</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location filename="../app/gui/HostsRun.cpp" line="601"/>
        <source>Physical device there</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location filename="../app/gui/HostsRun.cpp" line="601"/>
        <source>Host</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location filename="../app/gui/HostsRun.cpp" line="649"/>
        <source>Run</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location filename="../app/gui/HostsRun.cpp" line="679"/>
        <source>Every rank on this machine (%1).</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location filename="../app/gui/HostsRun.cpp" line="681"/>
        <source>Choose a host file.</source>
        <translation type="unfinished"></translation>
    </message>
    <message numerus="yes">
        <location filename="../app/gui/HostsRun.cpp" line="691"/>
        <source>%1 (%n slot(s))</source>
        <translation>
            <numerusform>%1 (%n slot)</numerusform>
            <numerusform>%1 (%n slots)</numerusform>
        </translation>
    </message>
    <message>
        <location filename="../app/gui/HostsRun.cpp" line="693"/>
        <source>%1 (a slot per core)</source>
        <translation type="unfinished"></translation>
    </message>
    <message numerus="yes">
        <location filename="../app/gui/HostsRun.cpp" line="694"/>
        <source>%n host(s): %1.</source>
        <translation>
            <numerusform>%n host: %1.</numerusform>
            <numerusform>%n hosts: %1.</numerusform>
        </translation>
    </message>
    <message>
        <location filename="../app/gui/HostsRun.cpp" line="698"/>
        <source>%1 ranks on %2 slots: mpirun starts more than one rank on a slot.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location filename="../app/gui/HostsRun.cpp" line="715"/>
        <source>chosen by mpirun</source>
        <translation type="unfinished"></translation>
    </message>
</context>
<context>
    <name>placer::gui::HostsRunner</name>
    <message>
        <location filename="../app/gui/HostsRun.cpp" line="246"/>
        <source>rank %1</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location filename="../app/gui/HostsRun.cpp" line="247"/>
        <source>rank %1 on %2</source>
        <translation type="unfinished"></translation>
    </message>
    <message numerus="yes">
        <location filename="../app/gui/HostsRun.cpp" line="260"/>
        <source>&lt;b&gt;Latency&lt;/b&gt; %1 ms median (min %2, max %3) over %4 iterations, on %n rank(s)</source>
        <translation>
            <numerusform>&lt;b&gt;Latency&lt;/b&gt; %1 ms median (min %2, max %3) over %4 iterations, on %n rank</numerusform>
            <numerusform>&lt;b&gt;Latency&lt;/b&gt; %1 ms median (min %2, max %3) over %4 iterations, on %n ranks</numerusform>
        </translation>
    </message>
    <message>
        <location filename="../app/gui/HostsRun.cpp" line="269"/>
        <source>device</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location filename="../app/gui/HostsRun.cpp" line="269"/>
        <source>runs on</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location filename="../app/gui/HostsRun.cpp" line="269"/>
        <source>host</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location filename="../app/gui/HostsRun.cpp" line="270"/>
        <source>busy</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location filename="../app/gui/HostsRun.cpp" line="286"/>
        <source>Rank %1 (%2) → rank %3 (%4): %5 copies, %6 bytes, %7 ms&lt;br&gt;</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location filename="../app/gui/HostsRun.cpp" line="298"/>
        <source>Outputs not checked against a reference.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location filename="../app/gui/HostsRun.cpp" line="300"/>
        <source>Outputs match the single-device reference (max abs diff %1).</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location filename="../app/gui/HostsRun.cpp" line="303"/>
        <source>&lt;b&gt;Outputs differ from the single-device reference&lt;/b&gt;: %1</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location filename="../app/gui/HostsRun.cpp" line="352"/>
        <source>A run on hosts is already going on.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location filename="../app/gui/HostsRun.cpp" line="358"/>
        <source>Cannot make a folder for the run&apos;s report: %1</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location filename="../app/gui/HostsRun.cpp" line="385"/>
        <source>Cannot start %1: %2 (is Open MPI installed?)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location filename="../app/gui/HostsRun.cpp" line="421"/>
        <source>mpirun ended with status %1:
%2</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location filename="../app/gui/HostsRun.cpp" line="427"/>
        <source>the run wrote no %1</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location filename="../app/gui/HostsRun.cpp" line="443"/>
        <source>The run on hosts ended, but %1.
%2</source>
        <translation type="unfinished"></translation>
    </message>
</context>
<context>
    <name>placer::gui::MainWindow</name>
    <message>
        <location filename="../app/gui/MainWindow.cpp" line="71"/>
        <source>Placement Explorer</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location filename="../app/gui/MainWindow.cpp" line="79"/>
        <source>&lt;b&gt;To place work&lt;/b&gt;, drag a device chip from the &lt;i&gt;Devices&lt;/i&gt; panel onto a node (or onto a selection). The planner re-infers everything else at once: fills show each node&apos;s device, dots mark pins, badges on edges are the copies the plan needs, and &lt;i&gt;Conflicts and notes&lt;/i&gt; says what it decided. Ctrl+Z undoes.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location filename="../app/gui/MainWindow.cpp" line="113"/>
        <source>laying out</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location filename="../app/gui/MainWindow.cpp" line="181"/>
        <source>Devices</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location filename="../app/gui/MainWindow.cpp" line="190"/>
        <source>Rules</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location filename="../app/gui/MainWindow.cpp" line="195"/>
        <source>Conflicts and notes</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location filename="../app/gui/MainWindow.cpp" line="200"/>
        <source>Properties</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location filename="../app/gui/MainWindow.cpp" line="202"/>
        <source>&lt;opened&gt;</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location filename="../app/gui/MainWindow.cpp" line="204"/>
        <source>History</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location filename="../app/gui/MainWindow.cpp" line="217"/>
        <source>Run</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location filename="../app/gui/MainWindow.cpp" line="468"/>
        <source>Export failed</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location filename="../app/gui/MainWindow.cpp" line="236"/>
        <source>Plans</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location filename="../app/gui/MainWindow.cpp" line="229"/>
        <source>Restored the unsaved changes</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location filename="../app/gui/MainWindow.cpp" line="245"/>
        <source>Timeline</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location filename="../app/gui/MainWindow.cpp" line="249"/>
        <source>&amp;File</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location filename="../app/gui/MainWindow.cpp" line="250"/>
        <source>&amp;Open…</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location filename="../app/gui/MainWindow.cpp" line="252"/>
        <source>Open &amp;Recent</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location filename="../app/gui/MainWindow.cpp" line="253"/>
        <source>Open the &amp;Example</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location filename="../app/gui/MainWindow.cpp" line="255"/>
        <source>&amp;Save Plan</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location filename="../app/gui/MainWindow.cpp" line="257"/>
        <source>Save Plan &amp;As…</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location filename="../app/gui/MainWindow.cpp" line="259"/>
        <source>Open &amp;Workspace…</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location filename="../app/gui/MainWindow.cpp" line="260"/>
        <source>&amp;Export</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location filename="../app/gui/MainWindow.cpp" line="265"/>
        <source>Export</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location filename="../app/gui/MainWindow.cpp" line="272"/>
        <source>&amp;Quit</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location filename="../app/gui/MainWindow.cpp" line="274"/>
        <source>&amp;Edit</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location filename="../app/gui/MainWindow.cpp" line="275"/>
        <source>&amp;Undo</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location filename="../app/gui/MainWindow.cpp" line="277"/>
        <source>&amp;Redo</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location filename="../app/gui/MainWindow.cpp" line="282"/>
        <source>&amp;Clear Pins of Selection</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location filename="../app/gui/MainWindow.cpp" line="285"/>
        <source>&amp;Split Across Devices…</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location filename="../app/gui/MainWindow.cpp" line="287"/>
        <source>Remove Split of Selection</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location filename="../app/gui/MainWindow.cpp" line="289"/>
        <source>Copy Plan as Command &amp;Line</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location filename="../app/gui/MainWindow.cpp" line="292"/>
        <source>Copied: %1</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location filename="../app/gui/MainWindow.cpp" line="296"/>
        <source>The placer run command that plans and runs what this window shows</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location filename="../app/gui/MainWindow.cpp" line="298"/>
        <source>&amp;Find…</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location filename="../app/gui/MainWindow.cpp" line="304"/>
        <source>Find &amp;Next</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location filename="../app/gui/MainWindow.cpp" line="306"/>
        <source>Find &amp;Previous</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location filename="../app/gui/MainWindow.cpp" line="309"/>
        <source>&amp;View</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location filename="../app/gui/MainWindow.cpp" line="310"/>
        <source>&amp;Fit to Window</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location filename="../app/gui/MainWindow.cpp" line="312"/>
        <source>Fit &amp;Selection</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location filename="../app/gui/MainWindow.cpp" line="315"/>
        <source>&amp;Collapse Groups</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location filename="../app/gui/MainWindow.cpp" line="316"/>
        <source>E&amp;xpand All Groups</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location filename="../app/gui/MainWindow.cpp" line="319"/>
        <source>Zoom &amp;In</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location filename="../app/gui/MainWindow.cpp" line="321"/>
        <source>Zoom &amp;Out</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location filename="../app/gui/MainWindow.cpp" line="325"/>
        <source>&amp;Devices</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location filename="../app/gui/MainWindow.cpp" line="326"/>
        <source>&amp;Edit Devices…</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location filename="../app/gui/MainWindow.cpp" line="328"/>
        <source>&amp;Calibrate This Machine…</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location filename="../app/gui/MainWindow.cpp" line="332"/>
        <source>&amp;Pin Selection To</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location filename="../app/gui/MainWindow.cpp" line="334"/>
        <source>Device %1</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location filename="../app/gui/MainWindow.cpp" line="347"/>
        <source>Device %1 (none)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location filename="../app/gui/MainWindow.cpp" line="351"/>
        <source>&amp;Run</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location filename="../app/gui/MainWindow.cpp" line="352"/>
        <source>&amp;Run the Plan</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location filename="../app/gui/MainWindow.cpp" line="354"/>
        <source>&amp;Cancel the Run</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location filename="../app/gui/MainWindow.cpp" line="356"/>
        <source>Run on &amp;Hosts…</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location filename="../app/gui/MainWindow.cpp" line="359"/>
        <source>Main</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location filename="../app/gui/MainWindow.cpp" line="364"/>
        <source>Planner: </source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location filename="../app/gui/MainWindow.cpp" line="375"/>
        <source>Find node, op or attribute (Ctrl+F)</source>
        <translation type="unfinished"></translation>
    </message>
    <message numerus="yes">
        <location filename="../app/gui/MainWindow.cpp" line="399"/>
        <source>There is no device %1: the palette has %n device(s)</source>
        <translation>
            <numerusform>There is no device %1: the palette has %n device</numerusform>
            <numerusform>There is no device %1: the palette has %n devices</numerusform>
        </translation>
    </message>
    <message>
        <location filename="../app/gui/MainWindow.cpp" line="406"/>
        <source>Select the nodes to pin first</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location filename="../app/gui/MainWindow.cpp" line="423"/>
        <source>Select the ops to split first</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location filename="../app/gui/MainWindow.cpp" line="545"/>
        <source>Calibrate this machine?</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location filename="../app/gui/MainWindow.cpp" line="546"/>
        <source>Auto placement predicts each op&apos;s time from the devices&apos; speed. This machine has not been measured yet, so it assumes typical figures. Measure its devices now? It takes a few seconds; Devices ▸ Calibrate does it later.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location filename="../app/gui/MainWindow.cpp" line="559"/>
        <location filename="../app/gui/MainWindow.cpp" line="589"/>
        <location filename="../app/gui/MainWindow.cpp" line="593"/>
        <source>Calibrate</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location filename="../app/gui/MainWindow.cpp" line="559"/>
        <source>No workspace is open to keep it in.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location filename="../app/gui/MainWindow.cpp" line="562"/>
        <source>Measuring this machine&apos;s devices…</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location filename="../app/gui/MainWindow.cpp" line="589"/>
        <source>Calibration failed: %1</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location filename="../app/gui/MainWindow.cpp" line="599"/>
        <source>Calibrated %1: auto placement now uses its measured rates</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location filename="../app/gui/MainWindow.cpp" line="663"/>
        <source>A run on hosts is already going on</source>
        <translation type="unfinished"></translation>
    </message>
    <message numerus="yes">
        <location filename="../app/gui/MainWindow.cpp" line="701"/>
        <source>Ran on %n rank(s): %1 ms median</source>
        <translation>
            <numerusform>Ran on %n rank: %1 ms median</numerusform>
            <numerusform>Ran on %n ranks: %1 ms median</numerusform>
        </translation>
    </message>
    <message>
        <location filename="../app/gui/MainWindow.cpp" line="707"/>
        <source>The run on hosts failed</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location filename="../app/gui/MainWindow.cpp" line="711"/>
        <source>The run on hosts was cancelled on every rank</source>
        <translation type="unfinished"></translation>
    </message>
    <message numerus="yes">
        <location filename="../app/gui/MainWindow.cpp" line="719"/>
        <source>Starting %n rank(s) with mpirun…</source>
        <translation>
            <numerusform>Starting %n rank with mpirun…</numerusform>
            <numerusform>Starting %n ranks with mpirun…</numerusform>
        </translation>
    </message>
    <message>
        <location filename="../app/gui/MainWindow.cpp" line="719"/>
        <source>Cancel</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location filename="../app/gui/MainWindow.cpp" line="721"/>
        <source>Run on Hosts</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location filename="../app/gui/MainWindow.cpp" line="107"/>
        <source>loading</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location filename="../app/gui/MainWindow.cpp" line="109"/>
        <source>Reading %1…</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location filename="../app/gui/MainWindow.cpp" line="104"/>
        <location filename="../app/gui/MainWindow.cpp" line="223"/>
        <location filename="../app/gui/MainWindow.cpp" line="227"/>
        <source>%1[*] — Placement Explorer</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location filename="../app/gui/UndoCommands.cpp" line="212"/>
        <source>Pin %1 to %2</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location filename="../app/gui/MainWindow.cpp" line="451"/>
        <source>No node matches &apos;%1&apos;</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location filename="../app/gui/MainWindow.cpp" line="189"/>
        <source>Bad rule</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location filename="../app/gui/MainWindow.cpp" line="471"/>
        <source>Exported %1</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location filename="../app/gui/MainWindow.cpp" line="478"/>
        <source>Unsaved plan</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location filename="../app/gui/MainWindow.cpp" line="479"/>
        <source>The plan has changes that are not saved. Save them in the workspace?</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location filename="../app/gui/MainWindow.cpp" line="526"/>
        <source>Run finished: %1 ms median; predicted %2 ms (%3%4 %)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location filename="../app/gui/MainWindow.cpp" line="533"/>
        <source>Run finished: %1 ms median</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location filename="../app/gui/MainWindow.cpp" line="233"/>
        <source>Saved plan &apos;%1&apos;</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location filename="../app/gui/UndoCommands.cpp" line="32"/>
        <source>Planner mode: demand</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location filename="../app/gui/UndoCommands.cpp" line="34"/>
        <source>Planner mode: unify</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location filename="../app/gui/UndoCommands.cpp" line="35"/>
        <source>Auto-place</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location filename="../app/gui/UndoCommands.cpp" line="61"/>
        <source>Stream %1 batches</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location filename="../app/gui/UndoCommands.cpp" line="63"/>
        <source>Stop streaming</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location filename="../app/gui/UndoCommands.cpp" line="57"/>
        <source>Pipeline in %1 micro-batches</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location filename="../app/gui/UndoCommands.cpp" line="60"/>
        <source>Stop pipelining</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location filename="../app/gui/UndoCommands.cpp" line="93"/>
        <source>Change rules</source>
        <translation type="unfinished"></translation>
    </message>
    <message numerus="yes">
        <location filename="../app/gui/UndoCommands.cpp" line="173"/>
        <source>Split %n op(s) across %1</source>
        <translation>
            <numerusform>Split %n op across %1</numerusform>
            <numerusform>Split %n ops across %1</numerusform>
        </translation>
    </message>
    <message>
        <location filename="../app/gui/UndoCommands.cpp" line="186"/>
        <source>Remove split</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location filename="../app/gui/UndoCommands.cpp" line="192"/>
        <source>Edit devices</source>
        <translation type="unfinished"></translation>
    </message>
    <message numerus="yes">
        <location filename="../app/gui/UndoCommands.cpp" line="214"/>
        <source>Pin %n node(s) to %1</source>
        <translation>
            <numerusform>Pin %n node to %1</numerusform>
            <numerusform>Pin %n nodes to %1</numerusform>
        </translation>
    </message>
    <message numerus="yes">
        <location filename="../app/gui/UndoCommands.cpp" line="232"/>
        <source>Clear %n pin(s)</source>
        <translation>
            <numerusform>Clear %n pin</numerusform>
            <numerusform>Clear %n pins</numerusform>
        </translation>
    </message>
</context>
<context>
    <name>placer::gui::ModelOpener</name>
    <message>
        <location filename="../app/gui/ModelOpener.cpp" line="49"/>
        <location filename="../app/gui/ModelOpener.cpp" line="69"/>
        <source>Cannot open %1</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location filename="../app/gui/ModelOpener.cpp" line="58"/>
        <source>Open a graph</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location filename="../app/gui/ModelOpener.cpp" line="59"/>
        <source>Graphs (*.relay *.txt *.onnx *.json);;All files (*)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location filename="../app/gui/ModelOpener.cpp" line="83"/>
        <source>Cannot open the example</source>
        <translation type="unfinished"></translation>
    </message>
</context>
<context>
    <name>placer::gui::PlanBrowser</name>
    <message>
        <location filename="../app/gui/PlanBrowser.cpp" line="18"/>
        <source>Plan</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location filename="../app/gui/PlanBrowser.cpp" line="18"/>
        <source>Graph</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location filename="../app/gui/PlanBrowser.cpp" line="18"/>
        <source>Devices</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location filename="../app/gui/PlanBrowser.cpp" line="18"/>
        <source>Copies</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location filename="../app/gui/PlanBrowser.cpp" line="19"/>
        <source>Copied</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location filename="../app/gui/PlanBrowser.cpp" line="19"/>
        <source>Last run</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location filename="../app/gui/PlanBrowser.cpp" line="19"/>
        <source>Updated</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location filename="../app/gui/PlanBrowser.cpp" line="29"/>
        <source>Open</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location filename="../app/gui/PlanBrowser.cpp" line="30"/>
        <source>Rename…</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location filename="../app/gui/PlanBrowser.cpp" line="31"/>
        <source>Duplicate…</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location filename="../app/gui/PlanBrowser.cpp" line="32"/>
        <source>Delete…</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location filename="../app/gui/PlanBrowser.cpp" line="33"/>
        <source>Compare</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location filename="../app/gui/PlanBrowser.cpp" line="44"/>
        <source>Select two plans to compare them.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location filename="../app/gui/PlanBrowser.cpp" line="48"/>
        <source>Select one plan.</source>
        <translation type="unfinished"></translation>
    </message>
</context>
<context>
    <name>placer::gui::RunPanel</name>
    <message>
        <location filename="../app/gui/RunPanel.cpp" line="37"/>
        <source>Run</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location filename="../app/gui/RunPanel.cpp" line="38"/>
        <source>Cancel</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location filename="../app/gui/RunPanel.cpp" line="43"/>
        <source>Input</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location filename="../app/gui/RunPanel.cpp" line="43"/>
        <source>Data</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location filename="../app/gui/RunPanel.cpp" line="46"/>
        <source>Data for each input: a .npy file, a shape such as 2,16,64 for random data at that shape, or nothing for random data at the planned shape. Other shapes are planned for when the run starts.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location filename="../app/gui/RunPanel.cpp" line="53"/>
        <source>.npy…</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location filename="../app/gui/RunPanel.cpp" line="55"/>
        <source>Choose a .npy file for the selected input</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location filename="../app/gui/RunPanel.cpp" line="62"/>
        <source>Data for an input</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location filename="../app/gui/RunPanel.cpp" line="63"/>
        <source>NumPy arrays (*.npy)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location filename="../app/gui/RunPanel.cpp" line="81"/>
        <source>Iterations:</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location filename="../app/gui/RunPanel.cpp" line="79"/>
        <source>Warm-up:</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location filename="../app/gui/RunPanel.cpp" line="85"/>
        <source>1 (not pipelined)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location filename="../app/gui/RunPanel.cpp" line="87"/>
        <source>Pipeline the plan: the batch is cut into this many micro-batches that flow through the devices, each device working on one while the next works on the one before. The plan and its predicted timeline follow at once.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location filename="../app/gui/RunPanel.cpp" line="93"/>
        <source>1 (one batch)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location filename="../app/gui/RunPanel.cpp" line="95"/>
        <source>Throughput mode: this many batches back to back through the pipeline, the next entering the first device while the last drains. The run reports items per second and each batch&apos;s latency.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location filename="../app/gui/RunPanel.cpp" line="100"/>
        <source>Stream:</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location filename="../app/gui/RunPanel.cpp" line="102"/>
        <source>Micro-batches:</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location filename="../app/gui/RunPanel.cpp" line="138"/>
        <source>Export trace…</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location filename="../app/gui/RunPanel.cpp" line="139"/>
        <source>Export CSV…</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location filename="../app/gui/RunPanel.cpp" line="146"/>
        <source>Export trace</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location filename="../app/gui/RunPanel.cpp" line="147"/>
        <source>Chrome trace (*.json)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location filename="../app/gui/RunPanel.cpp" line="149"/>
        <location filename="../app/gui/RunPanel.cpp" line="155"/>
        <source>Export failed</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location filename="../app/gui/RunPanel.cpp" line="149"/>
        <location filename="../app/gui/RunPanel.cpp" line="155"/>
        <source>Cannot write %1 (has the plan run?)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location filename="../app/gui/RunPanel.cpp" line="153"/>
        <source>Export timings</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location filename="../app/gui/RunPanel.cpp" line="153"/>
        <source>CSV (*.csv)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location filename="../app/gui/RunPanel.cpp" line="158"/>
        <source>loading weights %p%</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location filename="../app/gui/RunPanel.cpp" line="163"/>
        <source>%p%</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location filename="../app/gui/RunPanel.cpp" line="175"/>
        <location filename="../app/gui/RunPanel.cpp" line="233"/>
        <location filename="../app/gui/RunPanel.cpp" line="246"/>
        <source>Cannot run</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location filename="../app/gui/RunPanel.cpp" line="190"/>
        <source>&lt;i&gt;Running…&lt;/i&gt;</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location filename="../app/gui/RunPanel.cpp" line="210"/>
        <source>Planned as %1</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location filename="../app/gui/RunPanel.cpp" line="234"/>
        <source>Input %1: %2</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location filename="../app/gui/RunPanel.cpp" line="247"/>
        <source>Input %1: &apos;%2&apos; is neither a .npy file nor a shape such as 2,16,64</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location filename="../app/gui/RunPanel.cpp" line="269"/>
        <source>&lt;i&gt;The run was cancelled.&lt;/i&gt;</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location filename="../app/gui/RunPanel.cpp" line="265"/>
        <source>The run failed</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location filename="../app/gui/RunPanel.cpp" line="131"/>
        <source>&lt;i&gt;Runs execute the plan: cpu devices on the host, cuda devices on their GPU where this machine has one, the others on virtual CPUs. Per-node times overlay the graph, the timeline shows each device.&lt;/i&gt;</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location filename="../app/gui/RunPanel.cpp" line="313"/>
        <source>%1 predicted</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location filename="../app/gui/RunPanel.cpp" line="389"/>
        <source>µb%1 %2</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location filename="../app/gui/RunPanel.cpp" line="361"/>
        <source>%1: %2 idle %3 predicted</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location filename="../app/gui/RunPanel.cpp" line="369"/>
        <source>waiting</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location filename="../app/gui/RunPanel.cpp" line="370"/>
        <source>bubble (fill)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location filename="../app/gui/RunPanel.cpp" line="371"/>
        <source>bubble</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location filename="../app/gui/RunPanel.cpp" line="375"/>
        <source>bubble (drain)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location filename="../app/gui/RunPanel.cpp" line="399"/>
        <source>%1 (%2) on %3: %4 predicted%5</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location filename="../app/gui/RunPanel.cpp" line="403"/>
        <source> (from earlier runs)</source>
        <translation type="unfinished"></translation>
    </message>
    <message numerus="yes">
        <location filename="../app/gui/RunPanel.cpp" line="503"/>
        <source>&lt;p&gt;&lt;b&gt;Latency&lt;/b&gt; %1 ms median (min %2, max %3) over %n iteration(s)&lt;/p&gt;</source>
        <translation>
            <numerusform>&lt;p&gt;&lt;b&gt;Latency&lt;/b&gt; %1 ms median (min %2, max %3) over %n iteration&lt;/p&gt;</numerusform>
            <numerusform>&lt;p&gt;&lt;b&gt;Latency&lt;/b&gt; %1 ms median (min %2, max %3) over %n iterations&lt;/p&gt;</numerusform>
        </translation>
    </message>
    <message>
        <location filename="../app/gui/RunPanel.cpp" line="513"/>
        <source>&lt;p&gt;&lt;b&gt;Stream&lt;/b&gt; of %1 batches of %2: %3 items/s; a batch&apos;s latency %4 ms (median span in the traced run)%5&lt;/p&gt;</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location filename="../app/gui/RunPanel.cpp" line="520"/>
        <source>; predicted %1 items/s</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location filename="../app/gui/RunPanel.cpp" line="527"/>
        <location filename="../app/gui/RunPanel.cpp" line="551"/>
        <source>device</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location filename="../app/gui/RunPanel.cpp" line="527"/>
        <source>runs on</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location filename="../app/gui/RunPanel.cpp" line="527"/>
        <source>busy</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location filename="../app/gui/RunPanel.cpp" line="528"/>
        <source>memory</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location filename="../app/gui/RunPanel.cpp" line="544"/>
        <source>&lt;p&gt;&lt;b&gt;Predicted&lt;/b&gt; %1 ms, measured %2 ms; per device, its busy time and its idle time (in a pipeline, its bubble):&lt;/p&gt;</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location filename="../app/gui/RunPanel.cpp" line="551"/>
        <source>busy, predicted</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location filename="../app/gui/RunPanel.cpp" line="552"/>
        <location filename="../app/gui/RunPanel.cpp" line="553"/>
        <source>measured</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location filename="../app/gui/RunPanel.cpp" line="552"/>
        <source>idle, predicted</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location filename="../app/gui/RunPanel.cpp" line="567"/>
        <source>&lt;p&gt;Optimised: %1&lt;/p&gt;</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location filename="../app/gui/RunPanel.cpp" line="570"/>
        <source>&lt;p&gt;Note: %1&lt;/p&gt;</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location filename="../app/gui/RunPanel.cpp" line="573"/>
        <source>&lt;p&gt;Outputs match the single-device reference (max abs diff %1).&lt;/p&gt;</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location filename="../app/gui/RunPanel.cpp" line="576"/>
        <source>&lt;p style=&apos;color:#b01010&apos;&gt;Outputs differ from the single-device reference: %1&lt;/p&gt;</source>
        <translation type="unfinished"></translation>
    </message>
</context>
<context>
    <name>placer::gui::SplitDialog</name>
    <message>
        <location filename="../app/gui/SplitDialog.cpp" line="21"/>
        <source>Split Across Devices</source>
        <translation type="unfinished"></translation>
    </message>
    <message numerus="yes">
        <location filename="../app/gui/SplitDialog.cpp" line="27"/>
        <source>Run the %n selected op(s) once per device, each device on its share of the batch. The batch is split where the region starts and concatenated where it ends.</source>
        <translation>
            <numerusform>Run the %n selected op once per device, each device on its share of the batch. The batch is split where the region starts and concatenated where it ends.</numerusform>
            <numerusform>Run the %n selected ops once per device, each device on its share of the batch. The batch is split where the region starts and concatenated where it ends.</numerusform>
        </translation>
    </message>
    <message>
        <location filename="../app/gui/SplitDialog.cpp" line="33"/>
        <source>Device</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location filename="../app/gui/SplitDialog.cpp" line="34"/>
        <source>Share</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location filename="../app/gui/SplitDialog.cpp" line="47"/>
        <source>Relative share of the batch&apos;s rows</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location filename="../app/gui/SplitDialog.cpp" line="65"/>
        <source>Split</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location filename="../app/gui/SplitDialog.cpp" line="94"/>
        <source>Choose two devices or more.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location filename="../app/gui/SplitDialog.cpp" line="112"/>
        <source>%1: rows %2–%3</source>
        <translation type="unfinished"></translation>
    </message>
    <message numerus="yes">
        <location filename="../app/gui/SplitDialog.cpp" line="117"/>
        <source>Batch of %1 across %n op(s): %2.</source>
        <translation>
            <numerusform>Batch of %1 across %n op: %2.</numerusform>
            <numerusform>Batch of %1 across %n ops: %2.</numerusform>
        </translation>
    </message>
    <message numerus="yes">
        <location filename="../app/gui/SplitDialog.cpp" line="123"/>
        <source>%n conflict(s); the first: %1</source>
        <translation>
            <numerusform>%n conflict; the first: %1</numerusform>
            <numerusform>%n conflicts; the first: %1</numerusform>
        </translation>
    </message>
</context>
<context>
    <name>placer::gui::WorkspaceController</name>
    <message>
        <location filename="../app/gui/WorkspaceController.cpp" line="49"/>
        <source>Rename plan</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location filename="../app/gui/WorkspaceController.cpp" line="49"/>
        <source>New name:</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location filename="../app/gui/WorkspaceController.cpp" line="57"/>
        <source>Duplicate plan</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location filename="../app/gui/WorkspaceController.cpp" line="57"/>
        <source>Name of the copy:</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location filename="../app/gui/WorkspaceController.cpp" line="58"/>
        <source> copy</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location filename="../app/gui/WorkspaceController.cpp" line="63"/>
        <source>Delete plan</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location filename="../app/gui/WorkspaceController.cpp" line="64"/>
        <source>Delete the plan &apos;%1&apos; and its runs?</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location filename="../app/gui/WorkspaceController.cpp" line="70"/>
        <source>Compare plans</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location filename="../app/gui/WorkspaceController.cpp" line="94"/>
        <location filename="../app/gui/WorkspaceController.cpp" line="116"/>
        <source>Cannot keep a draft of the unsaved changes</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location filename="../app/gui/WorkspaceController.cpp" line="145"/>
        <source>Cannot drop the draft of the unsaved changes</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location filename="../app/gui/WorkspaceController.cpp" line="168"/>
        <source>Unsaved changes</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location filename="../app/gui/WorkspaceController.cpp" line="166"/>
        <source>Restore the unsaved changes to %1 from %2?</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location filename="../app/gui/WorkspaceController.cpp" line="164"/>
        <source>Restore the unsaved plan of %1 from %2?</source>
        <translation type="unfinished"></translation>
    </message>
    <message numerus="yes">
        <location filename="../app/gui/WorkspaceController.cpp" line="172"/>
        <source>Placement Explorer did not close cleanly; these changes were kept as a draft in the workspace (%1 on %2, %n cop(ies)).</source>
        <translation>
            <numerusform>Placement Explorer did not close cleanly; these changes were kept as a draft in the workspace (%1 on %2, %n cop(ies)).</numerusform>
            <numerusform>Placement Explorer did not close cleanly; these changes were kept as a draft in the workspace (%1 on %2, %n cop(ies)).</numerusform>
        </translation>
    </message>
    <message>
        <location filename="../app/gui/WorkspaceController.cpp" line="176"/>
        <source>Restore</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location filename="../app/gui/WorkspaceController.cpp" line="177"/>
        <source>Discard</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location filename="../app/gui/WorkspaceController.cpp" line="182"/>
        <source>Cannot discard the draft</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location filename="../app/gui/WorkspaceController.cpp" line="188"/>
        <source>Cannot restore the draft</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location filename="../app/gui/WorkspaceController.cpp" line="200"/>
        <source>Cannot take over the draft</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location filename="../app/gui/WorkspaceController.cpp" line="232"/>
        <source>Workspace: %1 (read-only; unsaved changes kept in %2)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location filename="../app/gui/WorkspaceController.cpp" line="233"/>
        <source>nowhere</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location filename="../app/gui/WorkspaceController.cpp" line="234"/>
        <source>The workspace is read-only</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location filename="../app/gui/WorkspaceController.cpp" line="236"/>
        <source>%1 cannot be written: its plans can be opened, but saving them fails. Unsaved changes are kept as drafts in the temporary workspace %2; open another workspace (File ▸ Open Workspace) to save.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location filename="../app/gui/WorkspaceController.cpp" line="241"/>
        <source>%1 cannot be written, and no temporary workspace could be made for drafts (%2): unsaved changes are not kept.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location filename="../app/gui/WorkspaceController.cpp" line="245"/>
        <source>Workspace: %1</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location filename="../app/gui/WorkspaceController.cpp" line="254"/>
        <location filename="../app/gui/WorkspaceController.cpp" line="263"/>
        <source>Cannot save the plan</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location filename="../app/gui/WorkspaceController.cpp" line="255"/>
        <source>No workspace is open (File ▸ Open Workspace).</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location filename="../app/gui/WorkspaceController.cpp" line="281"/>
        <source>Save plan</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location filename="../app/gui/WorkspaceController.cpp" line="281"/>
        <source>Plan name:</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location filename="../app/gui/WorkspaceController.cpp" line="291"/>
        <source>Workspace</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location filename="../app/gui/WorkspaceController.cpp" line="291"/>
        <source>Workspaces (*.db);;All files (*)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location filename="../app/gui/WorkspaceController.cpp" line="302"/>
        <source>Cannot open the plan</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location filename="../app/gui/WorkspaceController.cpp" line="307"/>
        <source>plan %1</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location filename="../app/gui/WorkspaceController.cpp" line="317"/>
        <source>The planner answers differently now</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location filename="../app/gui/WorkspaceController.cpp" line="318"/>
        <source>Since &apos;%1&apos; was saved, the planner&apos;s answer changed:
%2</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location filename="../app/gui/WorkspaceController.cpp" line="328"/>
        <source>Cannot rename the plan</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location filename="../app/gui/WorkspaceController.cpp" line="344"/>
        <source>Cannot duplicate the plan</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location filename="../app/gui/WorkspaceController.cpp" line="357"/>
        <source>Cannot delete the plan</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location filename="../app/gui/WorkspaceController.cpp" line="374"/>
        <source>&lt;h3&gt;%1 → %2&lt;/h3&gt;</source>
        <translation type="unfinished"></translation>
    </message>
    <message numerus="yes">
        <location filename="../app/gui/WorkspaceController.cpp" line="375"/>
        <source>&lt;p&gt;%n node(s) moved; </source>
        <translation>
            <numerusform>&lt;p&gt;%n node moved; </numerusform>
            <numerusform>&lt;p&gt;%n nodes moved; </numerusform>
        </translation>
    </message>
    <message>
        <location filename="../app/gui/WorkspaceController.cpp" line="376"/>
        <source>copies: %1 added, %2 removed; bytes copied %3 → %4.&lt;/p&gt;</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location filename="../app/gui/WorkspaceController.cpp" line="385"/>
        <source>&lt;p&gt;Last runs: %1 ms → %2 ms (%3 on %4, %5 on %6)&lt;/p&gt;</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location filename="../app/gui/WorkspaceController.cpp" line="392"/>
        <source> ms</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location filename="../app/gui/WorkspaceController.cpp" line="392"/>
        <source>none</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location filename="../app/gui/WorkspaceController.cpp" line="394"/>
        <source>&lt;p&gt;Predicted: %1 → %2; measured: %3 ms → %4 ms&lt;/p&gt;</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location filename="../app/gui/WorkspaceController.cpp" line="400"/>
        <source>&lt;p&gt;&lt;b&gt;Largest changes in node time&lt;/b&gt;&lt;br&gt;</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location filename="../app/gui/WorkspaceController.cpp" line="409"/>
        <source>&lt;p&gt;Run both plans to compare their latency.&lt;/p&gt;</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location filename="../app/gui/WorkspaceController.cpp" line="418"/>
        <source>… and %1 more</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location filename="../app/gui/WorkspaceController.cpp" line="421"/>
        <source>Moved</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location filename="../app/gui/WorkspaceController.cpp" line="422"/>
        <source>Copies added</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location filename="../app/gui/WorkspaceController.cpp" line="423"/>
        <source>Copies removed</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location filename="../app/gui/WorkspaceController.cpp" line="432"/>
        <source>Cannot keep the run&apos;s node times</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location filename="../app/gui/WorkspaceController.cpp" line="438"/>
        <source>Cannot record the run</source>
        <translation type="unfinished"></translation>
    </message>
</context>
<context>
    <name>placer::views::ConflictsPanel</name>
    <message>
        <location filename="../views/ConflictsPanel.cpp" line="33"/>
        <source>No conflicts.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location filename="../views/ConflictsPanel.cpp" line="36"/>
        <source>Note: %1</source>
        <translation type="unfinished"></translation>
    </message>
</context>
<context>
    <name>placer::views::DeviceChip</name>
    <message>
        <location filename="../views/DevicePalette.cpp" line="31"/>
        <source>Drag onto a node, or onto a selected node to place the whole selection, to run it on %1</source>
        <translation type="unfinished"></translation>
    </message>
</context>
<context>
    <name>placer::views::DevicePalette</name>
    <message>
        <location filename="../views/DevicePalette.cpp" line="129"/>
        <source>default</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location filename="../views/DevicePalette.cpp" line="131"/>
        <source>host</source>
        <translation type="unfinished"></translation>
    </message>
    <message numerus="yes">
        <location filename="../views/DevicePalette.cpp" line="141"/>
        <source>%n node(s)</source>
        <translation>
            <numerusform>%n node</numerusform>
            <numerusform>%n nodes</numerusform>
        </translation>
    </message>
</context>
<context>
    <name>placer::views::GraphScene</name>
    <message>
        <location filename="../views/GraphScene.cpp" line="394"/>
        <source>Runs as one op on its device; body collapsed:</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location filename="../views/GraphScene.cpp" line="568"/>
        <source>size at run time</source>
        <translation type="unfinished"></translation>
    </message>
</context>
<context>
    <name>placer::views::HintBar</name>
    <message>
        <location filename="../views/HintBar.cpp" line="23"/>
        <source>Hide this hint</source>
        <translation type="unfinished"></translation>
    </message>
</context>
<context>
    <name>placer::views::LayoutController</name>
    <message>
        <location filename="../views/LayoutController.cpp" line="25"/>
        <source>Cancel layout</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location filename="../views/LayoutController.cpp" line="28"/>
        <source>laying out</source>
        <translation type="unfinished"></translation>
    </message>
    <message numerus="yes">
        <location filename="../views/LayoutController.cpp" line="55"/>
        <source>%n name scope(s) shown collapsed: double-click a group to open it; Find opens the groups a node is in</source>
        <translation>
            <numerusform>%n name scope shown collapsed: double-click a group to open it; Find opens the groups a node is in</numerusform>
            <numerusform>%n name scopes shown collapsed: double-click a group to open it; Find opens the groups a node is in</numerusform>
        </translation>
    </message>
    <message numerus="yes">
        <location filename="../views/LayoutController.cpp" line="73"/>
        <source>Showing a quick layout while Graphviz lays out %n node(s)…</source>
        <translation>
            <numerusform>Showing a quick layout while Graphviz lays out %n node…</numerusform>
            <numerusform>Showing a quick layout while Graphviz lays out %n nodes…</numerusform>
        </translation>
    </message>
    <message>
        <location filename="../views/LayoutController.cpp" line="139"/>
        <source>Layout failed (%1); showing a simple ranked layout</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location filename="../views/LayoutController.cpp" line="142"/>
        <source>Laid out in %1 s (%2 of %3 levels; the others were kept from before)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location filename="../views/LayoutController.cpp" line="148"/>
        <source>Laid out in %1 s</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location filename="../views/LayoutController.cpp" line="184"/>
        <source>Layout cancelled; showing a simple ranked layout</source>
        <translation type="unfinished"></translation>
    </message>
</context>
<context>
    <name>placer::views::ModeBox</name>
    <message>
        <location filename="../views/ModeBox.cpp" line="10"/>
        <source>demand</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location filename="../views/ModeBox.cpp" line="11"/>
        <source>unify (TVM)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location filename="../views/ModeBox.cpp" line="12"/>
        <source>auto-place</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location filename="../views/ModeBox.cpp" line="13"/>
        <source>demand: unpinned nodes go where their consumers are; unify: nodes joined by hard edges share a device, as in TVM; auto-place: unpinned ops go where the cost model predicts the shortest latency, pins and rules kept</source>
        <translation type="unfinished"></translation>
    </message>
</context>
<context>
    <name>placer::views::PlacementDocument</name>
    <message>
        <location filename="../views/PlacementDocument.cpp" line="211"/>
        <source>&apos;%1&apos; cannot be removed: device_copy %2 in the model names it</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location filename="../views/PlacementDocument.cpp" line="220"/>
        <source>&apos;%1&apos; cannot be removed: a result of the model must be on it</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location filename="../views/PlacementDocument.cpp" line="230"/>
        <source>devices named by device_copy nodes must keep their place in the list</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location filename="../views/PlacementDocument.cpp" line="237"/>
        <source>devices that results must be on must keep their place in the list</source>
        <translation type="unfinished"></translation>
    </message>
</context>
<context>
    <name>placer::views::PropertiesPanel</name>
    <message>
        <location filename="../views/PropertiesPanel.cpp" line="34"/>
        <source>&lt;i&gt;Select a node to see its properties and why it runs where it does.&lt;/i&gt;</source>
        <translation type="unfinished"></translation>
    </message>
    <message numerus="yes">
        <location filename="../views/PropertiesPanel.cpp" line="36"/>
        <source>%n node(s) selected.</source>
        <translation>
            <numerusform>%n node selected.</numerusform>
            <numerusform>%n nodes selected.</numerusform>
        </translation>
    </message>
    <message>
        <location filename="../views/PropertiesPanel.cpp" line="54"/>
        <source>Devices:</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location filename="../views/PropertiesPanel.cpp" line="55"/>
        <source>Shards:</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location filename="../views/PropertiesPanel.cpp" line="59"/>
        <source>%1: rows %2–%3 of %4</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location filename="../views/PropertiesPanel.cpp" line="68"/>
        <source>, predicted %1</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location filename="../views/PropertiesPanel.cpp" line="75"/>
        <source>Device:</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location filename="../views/PropertiesPanel.cpp" line="75"/>
        <source>none</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location filename="../views/PropertiesPanel.cpp" line="78"/>
        <source>Why:</source>
        <translation type="unfinished"></translation>
    </message>
    <message numerus="yes">
        <location filename="../views/PropertiesPanel.cpp" line="86"/>
        <source>… %n more</source>
        <translation>
            <numerusform>… %n more</numerusform>
            <numerusform>… %n more</numerusform>
        </translation>
    </message>
    <message>
        <location filename="../views/PropertiesPanel.cpp" line="94"/>
        <source>Decided by:</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location filename="../views/PropertiesPanel.cpp" line="98"/>
        <source>Pinned:</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location filename="../views/PropertiesPanel.cpp" line="103"/>
        <source>Predicted:</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location filename="../views/PropertiesPanel.cpp" line="103"/>
        <source>from</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location filename="../views/PropertiesPanel.cpp" line="106"/>
        <source> (from earlier runs)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location filename="../views/PropertiesPanel.cpp" line="107"/>
        <source> (roofline estimate)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location filename="../views/PropertiesPanel.cpp" line="109"/>
        <source>Inputs:</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location filename="../views/PropertiesPanel.cpp" line="114"/>
        <source>Outputs:</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location filename="../views/PropertiesPanel.cpp" line="121"/>
        <source>Bodies (collapsed; they run on this node&apos;s device):</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location filename="../views/PropertiesPanel.cpp" line="128"/>
        <source>Attributes:</source>
        <translation type="unfinished"></translation>
    </message>
</context>
<context>
    <name>placer::views::RulesPanel</name>
    <message>
        <location filename="../views/RulesPanel.cpp" line="21"/>
        <source>Apply rules</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location filename="../views/RulesPanel.cpp" line="25"/>
        <source>Op-name rules, one OP=DEVICE a line (globs, first match wins):</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location filename="../views/RulesPanel.cpp" line="29"/>
        <source>Fallback device:</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location filename="../views/RulesPanel.cpp" line="64"/>
        <source>(none)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location filename="../views/RulesPanel.cpp" line="89"/>
        <source>&apos;%1&apos; is not of the form OP=DEVICE</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location filename="../views/RulesPanel.cpp" line="96"/>
        <source>&apos;%1&apos; names unknown device &apos;%2&apos;</source>
        <translation type="unfinished"></translation>
    </message>
</context>
<context>
    <name>placer::views::TimelineWidget</name>
    <message>
        <location filename="../views/TimelineWidget.cpp" line="102"/>
        <source>Run the plan (Run ▸ Run) to see when each device works.</source>
        <translation type="unfinished"></translation>
    </message>
</context>
</TS>
