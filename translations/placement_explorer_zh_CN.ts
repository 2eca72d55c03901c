<?xml version="1.0" encoding="utf-8"?>
<!DOCTYPE TS>
<TS version="2.1" language="zh_CN">
<context>
    <name>Exports</name>
    <message>
        <location filename="../app/gui/Exports.cpp" line="36"/>
        <source>Cannot write %1: %2</source>
        <translation>无法写入 %1：%2</translation>
    </message>
    <message>
        <location filename="../app/gui/Exports.cpp" line="55"/>
        <location filename="../app/gui/Exports.cpp" line="70"/>
        <location filename="../app/gui/Exports.cpp" line="75"/>
        <source>Cannot write %1</source>
        <translation>无法写入 %1</translation>
    </message>
    <message>
        <location filename="../app/gui/Exports.cpp" line="102"/>
        <source>There are no run times to export: run the plan first (Run ▸ Run the Plan).</source>
        <translation>没有可导出的运行时间：请先运行计划（运行 ▸ 运行计划）。</translation>
    </message>
    <message>
        <location filename="../app/gui/Exports.cpp" line="117"/>
        <source>&apos;%1&apos; is not a Relay operator; export a JSON graph instead.</source>
        <translation>“%1”不是 Relay 算子；请改为导出 JSON 图</translation>
    </message>
    <message>
        <location filename="../app/gui/Exports.cpp" line="127"/>
        <source>Netron annotations need a model read from ONNX; export a JSON graph or the plan report instead.</source>
        <translation>Netron 注释需要从 ONNX 读取的模型；请改为导出 JSON 图或计划报告。</translation>
    </message>
    <message>
        <location filename="../app/gui/Exports.cpp" line="160"/>
        <source>Unknown export &apos;%1&apos;.</source>
        <translation>未知的导出类型“%1”。</translation>
    </message>
    <message>
        <location filename="../app/gui/Exports.cpp" line="168"/>
        <source>Image (PNG)…</source>
        <translation>图像 (PNG)…</translation>
    </message>
    <message>
        <location filename="../app/gui/Exports.cpp" line="168"/>
        <source>PNG image (*.png)</source>
        <translation>PNG 图像 (*.png)</translation>
    </message>
    <message>
        <location filename="../app/gui/Exports.cpp" line="169"/>
        <source>Vector image (SVG)…</source>
        <translation>矢量图 (SVG)…</translation>
    </message>
    <message>
        <location filename="../app/gui/Exports.cpp" line="170"/>
        <source>SVG image (*.svg)</source>
        <translation>SVG 图像 (*.svg)</translation>
    </message>
    <message>
        <location filename="../app/gui/Exports.cpp" line="171"/>
        <source>Relay text with placement…</source>
        <translation>带放置信息的 Relay 文本…</translation>
    </message>
    <message>
        <location filename="../app/gui/Exports.cpp" line="172"/>
        <source>Relay text (*.relay)</source>
        <translation>Relay 文本 (*.relay)</translation>
    </message>
    <message>
        <location filename="../app/gui/Exports.cpp" line="173"/>
        <source>JSON graph…</source>
        <translation>JSON 图…</translation>
    </message>
    <message>
        <location filename="../app/gui/Exports.cpp" line="173"/>
        <source>JSON graph (*.json)</source>
        <translation>JSON 图 (*.json)</translation>
    </message>
    <message>
        <location filename="../app/gui/Exports.cpp" line="174"/>
        <source>Plan report (JSON)…</source>
        <translation>计划报告 (JSON)…</translation>
    </message>
    <message>
        <location filename="../app/gui/Exports.cpp" line="175"/>
        <source>Plan report (*.json)</source>
        <translation>计划报告 (*.json)</translation>
    </message>
    <message>
        <location filename="../app/gui/Exports.cpp" line="176"/>
        <source>Model Explorer overlay: devices…</source>
        <translation>Model Explorer 叠加层：设备…</translation>
    </message>
    <message>
        <location filename="../app/gui/Exports.cpp" line="177"/>
        <location filename="../app/gui/Exports.cpp" line="179"/>
        <source>Model Explorer node data (*.json)</source>
        <translation>Model Explorer 节点数据 (*.json)</translation>
    </message>
    <message>
        <location filename="../app/gui/Exports.cpp" line="178"/>
        <source>Model Explorer overlay: run times…</source>
        <translation>Model Explorer 叠加层：运行时间…</translation>
    </message>
    <message>
        <location filename="../app/gui/Exports.cpp" line="181"/>
        <source>Netron: ONNX model annotated with placement and times…</source>
        <translation>Netron：带放置与耗时注释的 ONNX 模型…</translation>
    </message>
    <message>
        <location filename="../app/gui/Exports.cpp" line="182"/>
        <source>ONNX model (*.onnx)</source>
        <translation>ONNX 模型 (*.onnx)</translation>
    </message>
</context>
<context>
    <name>GraphScene</name>
    <message>
        <location filename="../views/GraphScene.cpp" line="757"/>
        <source>split ⇉ %1</source>
        <translation>拆分 ⇉ %1</translation>
    </message>
    <message>
        <location filename="../views/GraphScene.cpp" line="761"/>
        <location filename="../views/GraphScene.cpp" line="768"/>
        <source>concat ⇇</source>
        <translation>拼接 ⇇</translation>
    </message>
</context>
<context>
    <name>HostsRunner</name>
    <message>
        <location filename="../app/gui/HostsRun.cpp" line="165"/>
        <source>%1 compute</source>
        <translation>%1 计算</translation>
    </message>
    <message>
        <location filename="../app/gui/HostsRun.cpp" line="174"/>
        <source>inputs → %1</source>
        <translation>输入 → %1</translation>
    </message>
    <message>
        <location filename="../app/gui/HostsRun.cpp" line="176"/>
        <source>input %1: %2 ms</source>
        <translation>输入 %1：%2 毫秒</translation>
    </message>
    <message>
        <location filename="../app/gui/HostsRun.cpp" line="184"/>
        <location filename="../app/gui/HostsRun.cpp" line="187"/>
        <source>copies %1 → %2</source>
        <translation>拷贝 %1 → %2</translation>
    </message>
    <message>
        <location filename="../app/gui/HostsRun.cpp" line="192"/>
        <source>copy %1, %2 → %3, %4 bytes: %5 ms</source>
        <translation>复制 %1，%2 → %3，%4 字节：%5 ms</translation>
    </message>
    <message>
        <location filename="../app/gui/HostsRun.cpp" line="205"/>
        <source>waiting for %1</source>
        <translation>等待 %1</translation>
    </message>
    <message>
        <location filename="../app/gui/HostsRun.cpp" line="206"/>
        <source>idle %1 ms, waiting for %2</source>
        <translation>空闲 %1 毫秒，等待 %2</translation>
    </message>
    <message>
        <location filename="../app/gui/HostsRun.cpp" line="210"/>
        <source>%1 (%2) on %3 [%4]: %5 ms</source>
        <translation>%1 (%2) 在 %3 [%4] 上：%5 毫秒</translation>
    </message>
</context>
<context>
    <name>LanguageMenu</name>
    <message>
        <location filename="../app/gui/LanguageMenu.cpp" line="15"/>
        <source>&amp;Language</source>
        <translation>语言(&amp;L)</translation>
    </message>
    <message>
        <location filename="../app/gui/LanguageMenu.cpp" line="19"/>
        <source>System Default</source>
        <translation>系统默认</translation>
    </message>
    <message>
        <location filename="../app/gui/LanguageMenu.cpp" line="31"/>
        <source>The new language applies when Placement Explorer starts again.</source>
        <translation>新语言将在下次启动 Placement Explorer 时生效。</translation>
    </message>
</context>
<context>
    <name>NodeItem</name>
    <message numerus="yes">
        <location filename="../views/NodeItem.cpp" line="203"/>
        <source> (fused, %n more)</source>
        <translation>
            <numerusform>（已融合，另有 %n 个）</numerusform>
        </translation>
    </message>
    <message>
        <location filename="../views/NodeItem.cpp" line="214"/>
        <source>fused into %1</source>
        <translation>已融合进 %1</translation>
    </message>
</context>
<context>
    <name>NodeMenu</name>
    <message>
        <location filename="../views/NodeMenu.cpp" line="40"/>
        <source>Collapse %1</source>
        <translation>折叠 %1</translation>
    </message>
    <message>
        <location filename="../views/NodeMenu.cpp" line="54"/>
        <source>Pin to</source>
        <translation>固定到</translation>
    </message>
    <message>
        <location filename="../views/NodeMenu.cpp" line="59"/>
        <source>Clear Pin</source>
        <translation>清除固定</translation>
    </message>
    <message>
        <location filename="../views/NodeMenu.cpp" line="66"/>
        <source>Split Across Devices…</source>
        <translation>跨设备拆分…</translation>
    </message>
    <message>
        <location filename="../views/NodeMenu.cpp" line="71"/>
        <source>Remove Split</source>
        <translation>移除拆分</translation>
    </message>
    <message>
        <location filename="../views/NodeMenu.cpp" line="78"/>
        <source>Expand %1</source>
        <translation>展开 %1</translation>
    </message>
    <message>
        <location filename="../views/NodeMenu.cpp" line="83"/>
        <source>Collapse</source>
        <translation>折叠</translation>
    </message>
    <message>
        <location filename="../views/NodeMenu.cpp" line="89"/>
        <source>Fit Selection</source>
        <translation>适应所选</translation>
    </message>
</context>
<context>
    <name>PlanSummary</name>
    <message numerus="yes">
        <location filename="../views/PlanSummary.cpp" line="53"/>
        <source>%n copy(ies), %1 copied</source>
        <translation>
            <numerusform>%n 次拷贝，共 %1</numerusform>
        </translation>
    </message>
    <message>
        <location filename="../views/PlanSummary.cpp" line="57"/>
        <source>(sizes at %1)</source>
        <translation>（尺寸按 %1）</translation>
    </message>
    <message numerus="yes">
        <location filename="../views/PlanSummary.cpp" line="59"/>
        <source>%n region(s) split</source>
        <translation>
            <numerusform>拆分了 %n 个区域</numerusform>
        </translation>
    </message>
    <message numerus="yes">
        <location filename="../views/PlanSummary.cpp" line="62"/>
        <source>pipelined in %n micro-batch(es)</source>
        <translation>
            <numerusform>以 %n 个微批次流水线执行</numerusform>
        </translation>
    </message>
    <message numerus="yes">
        <location filename="../views/PlanSummary.cpp" line="67"/>
        <source>a stream of %n batch(es)</source>
        <translation>
            <numerusform>%n 个批次的流</numerusform>
        </translation>
    </message>
    <message>
        <location filename="../views/PlanSummary.cpp" line="73"/>
        <source>peak memory: %1</source>
        <translation>峰值内存：%1</translation>
    </message>
    <message numerus="yes">
        <location filename="../views/PlanSummary.cpp" line="76"/>
        <source>%n conflict(s)</source>
        <translation>
            <numerusform>%n 个冲突</numerusform>
        </translation>
    </message>
    <message>
        <location filename="../views/PlanSummary.cpp" line="78"/>
        <source>predicting…</source>
        <translation>正在预测…</translation>
    </message>
    <message>
        <location filename="../views/PlanSummary.cpp" line="81"/>
        <source>predicted latency: %1</source>
        <translation>预测延迟：%1</translation>
    </message>
    <message>
        <location filename="../views/PlanSummary.cpp" line="85"/>
        <source>predicted latency at %2: %1</source>
        <translation>按 %2 预测的延迟：%1</translation>
    </message>
    <message>
        <location filename="../views/PlanSummary.cpp" line="90"/>
        <source>planned in %1 ms</source>
        <translation>规划用时 %1 毫秒</translation>
    </message>
    <message numerus="yes">
        <location filename="../views/PlanSummary.cpp" line="93"/>
        <source>%n node(s) folded at load</source>
        <translation>
            <numerusform>加载时折叠了 %n 个节点</numerusform>
        </translation>
    </message>
</context>
<context>
    <name>QObject</name>
    <message>
        <location filename="../views/CopyBadgeItem.cpp" line="26"/>
        <source>device copy %1</source>
        <translation>设备拷贝 %1</translation>
    </message>
    <message numerus="yes">
        <location filename="../views/GroupItem.cpp" line="16"/>
        <source>%1: %n node(s), collapsed (double-click or the context menu expands it)</source>
        <translation>
            <numerusform>%1：%n 个节点，已折叠（双击或右键菜单展开）</numerusform>
        </translation>
    </message>
    <message numerus="yes">
        <location filename="../views/FrameItem.cpp" line="14"/>
        <source>%1: %n node(s), open (double-click its title to collapse it)</source>
        <translation>
            <numerusform>%1：%n 个节点，已展开（双击标题可折叠）</numerusform>
        </translation>
    </message>
    <message numerus="yes">
        <location filename="../views/FrameItem.cpp" line="20"/>
        <location filename="../views/GroupItem.cpp" line="88"/>
        <source>%n node(s)</source>
        <translation>
            <numerusform>%n 个节点</numerusform>
        </translation>
    </message>
    <message numerus="yes">
        <location filename="../views/GroupItem.cpp" line="90"/>
        <source>%n pin(s)</source>
        <translation>
            <numerusform>%n 个固定</numerusform>
        </translation>
    </message>
</context>
<context>
    <name>RunPanel</name>
    <message>
        <location filename="../app/gui/RunPanel.cpp" line="425"/>
        <source>%1 compute</source>
        <translation>%1 计算</translation>
    </message>
    <message>
        <location filename="../app/gui/RunPanel.cpp" line="440"/>
        <source>%1 (%2) on %3 [%4]: %5 ms</source>
        <translation>%1 (%2) 在 %3 [%4] 上：%5 毫秒</translation>
    </message>
    <message>
        <location filename="../app/gui/RunPanel.cpp" line="446"/>
        <source>µb%1 %2</source>
        <translation>微批%1 %2</translation>
    </message>
    <message>
        <location filename="../app/gui/RunPanel.cpp" line="447"/>
        <source>, micro-batch %1</source>
        <translation>，微批次 %1</translation>
    </message>
    <message>
        <location filename="../app/gui/RunPanel.cpp" line="455"/>
        <source>copies %1 → %2</source>
        <translation>拷贝 %1 → %2</translation>
    </message>
    <message>
        <location filename="../app/gui/RunPanel.cpp" line="462"/>
        <source>copy %1, %2: %3 ms</source>
        <translation>拷贝 %1，%2：%3 毫秒</translation>
    </message>
    <message>
        <location filename="../app/gui/RunPanel.cpp" line="466"/>
        <source>inputs → %1</source>
        <translation>输入 → %1</translation>
    </message>
    <message>
        <location filename="../app/gui/RunPanel.cpp" line="468"/>
        <source>input %1: %2 ms</source>
        <translation>输入 %1：%2 毫秒</translation>
    </message>
    <message>
        <location filename="../app/gui/RunPanel.cpp" line="485"/>
        <source>waiting for %1</source>
        <translation>等待 %1</translation>
    </message>
    <message>
        <location filename="../app/gui/RunPanel.cpp" line="491"/>
        <source>idle %1 ms, waiting for %2</source>
        <translation>空闲 %1 毫秒，等待 %2</translation>
    </message>
</context>
<context>
    <name>main</name>
    <message>
        <location filename="../app/gui/main.cpp" line="120"/>
        <source>Decide where each operator of a dataflow graph runs on a multi-device machine.</source>
        <translation>决定数据流图中每个算子在多设备机器上的运行位置。</translation>
    </message>
    <message>
        <location filename="../app/gui/main.cpp" line="126"/>
        <source>A Relay, ONNX or JSON graph (default: the bundled example).</source>
        <translation>Relay、ONNX 或 JSON 图（默认：自带示例）。</translation>
    </message>
    <message>
        <location filename="../app/gui/main.cpp" line="130"/>
        <source>Write a PNG of the main window and exit.</source>
        <translation>将主窗口保存为 PNG 后退出。</translation>
    </message>
    <message>
        <location filename="../app/gui/main.cpp" line="134"/>
        <source>Input format: relay, json, onnx or auto.</source>
        <translation>输入格式：relay、json、onnx 或 auto。</translation>
    </message>
    <message>
        <location filename="../app/gui/main.cpp" line="135"/>
        <source>Virtual devices, NAME:KIND[:mem=SIZE],...</source>
        <translation>虚拟设备，NAME:KIND[:mem=SIZE],...</translation>
    </message>
    <message>
        <location filename="../app/gui/main.cpp" line="136"/>
        <source>Where unconstrained work goes.</source>
        <translation>未受约束的工作去往的设备。</translation>
    </message>
    <message>
        <location filename="../app/gui/main.cpp" line="137"/>
        <source>Where host-only ops run.</source>
        <translation>仅限主机的算子运行的设备。</translation>
    </message>
    <message>
        <location filename="../app/gui/main.cpp" line="138"/>
        <source>Pin NODE=DEVICE (repeatable).</source>
        <translation>固定 NODE=DEVICE（可重复）。</translation>
    </message>
    <message>
        <location filename="../app/gui/main.cpp" line="139"/>
        <source>Pin NODE=DEVICE, result included (repeatable).</source>
        <translation>固定 NODE=DEVICE，包括其结果（可重复）。</translation>
    </message>
    <message>
        <location filename="../app/gui/main.cpp" line="140"/>
        <source>Op rule OP=DEVICE (repeatable).</source>
        <translation>算子规则 OP=DEVICE（可重复）。</translation>
    </message>
    <message>
        <location filename="../app/gui/main.cpp" line="141"/>
        <source>Fallback device for ops no rule covers.</source>
        <translation>没有规则覆盖的算子的后备设备。</translation>
    </message>
    <message>
        <location filename="../app/gui/main.cpp" line="143"/>
        <source>Split NODES=DEV[:SHARE],... on the batch (repeatable).</source>
        <translation>按批次拆分 NODES=DEV[:SHARE],...（可重复）。</translation>
    </message>
    <message>
        <location filename="../app/gui/main.cpp" line="144"/>
        <source>Planner mode: demand, unify or auto.</source>
        <translation>规划模式：demand、unify 或 auto。</translation>
    </message>
    <message>
        <location filename="../app/gui/main.cpp" line="146"/>
        <source>Constants on several devices: replicate or copy.</source>
        <translation>多个设备上的常量：replicate 或 copy。</translation>
    </message>
    <message>
        <location filename="../app/gui/main.cpp" line="148"/>
        <source>Pipeline the plan in M micro-batches of the batch.</source>
        <translation>将批次切分为 M 个微批次，以流水线执行计划。</translation>
    </message>
    <message>
        <location filename="../app/gui/main.cpp" line="149"/>
        <source>Throughput mode: N batches back to back through the pipeline.</source>
        <translation>吞吐模式：N 个批次首尾相接地流经流水线。</translation>
    </message>
    <message>
        <location filename="../app/gui/main.cpp" line="159"/>
        <source>Run the plan before the screenshot: cuda devices on their GPU where this machine has it, the others on the host and virtual CPUs.</source>
        <translation>截图前先运行计划：本机有 GPU 时 cuda 设备在其 GPU 上运行，其余设备在主机和虚拟 CPU 上运行。</translation>
    </message>
    <message>
        <location filename="../app/gui/main.cpp" line="164"/>
        <source>Collapse the top-level name scopes into groups.</source>
        <translation>将顶层名称作用域折叠为分组。</translation>
    </message>
    <message>
        <location filename="../app/gui/main.cpp" line="167"/>
        <source>Open this collapsed name scope as a frame (repeatable; with --screenshot).</source>
        <translation>将此折叠的名称作用域展开为框架（可重复；与 --screenshot 一起使用）。</translation>
    </message>
    <message>
        <location filename="../app/gui/main.cpp" line="173"/>
        <source>Run the plan under mpirun on N ranks of this machine before the screenshot, the devices on the ranks Run ▸ Run on Hosts proposes.</source>
        <translation>截图前用 mpirun 在本机的 N 个进程（rank）上运行计划，设备放在“运行 ▸ 在多台主机上运行”建议的 rank 上。</translation>
    </message>
</context>
<context>
    <name>placer::gui::DeviceDialog</name>
    <message>
        <location filename="../app/gui/DeviceDialog.cpp" line="26"/>
        <location filename="../app/gui/DeviceDialog.cpp" line="207"/>
        <source>Devices</source>
        <translation>设备</translation>
    </message>
    <message>
        <location filename="../app/gui/DeviceDialog.cpp" line="29"/>
        <source>Virtual devices are what plans name; each runs on a physical device when the plan runs (cpu, vcpuN, cuda:N).</source>
        <translation>计划使用虚拟设备；运行时每个虚拟设备映射到一个物理设备（cpu、vcpuN、cuda:N）。</translation>
    </message>
    <message>
        <location filename="../app/gui/DeviceDialog.cpp" line="34"/>
        <source>Name</source>
        <translation>名称</translation>
    </message>
    <message>
        <location filename="../app/gui/DeviceDialog.cpp" line="34"/>
        <source>Kind</source>
        <translation>类型</translation>
    </message>
    <message>
        <location filename="../app/gui/DeviceDialog.cpp" line="34"/>
        <source>Memory capacity</source>
        <translation>内存容量</translation>
    </message>
    <message>
        <location filename="../app/gui/DeviceDialog.cpp" line="34"/>
        <source>Runs on</source>
        <translation>运行于</translation>
    </message>
    <message>
        <location filename="../app/gui/DeviceDialog.cpp" line="34"/>
        <source>Colour</source>
        <translation>颜色</translation>
    </message>
    <message>
        <location filename="../app/gui/DeviceDialog.cpp" line="39"/>
        <source>Add</source>
        <translation>添加</translation>
    </message>
    <message>
        <location filename="../app/gui/DeviceDialog.cpp" line="40"/>
        <source>Remove</source>
        <translation>删除</translation>
    </message>
    <message>
        <location filename="../app/gui/DeviceDialog.cpp" line="48"/>
        <source>Default device (unconstrained work):</source>
        <translation>默认设备（无约束的工作）：</translation>
    </message>
    <message>
        <location filename="../app/gui/DeviceDialog.cpp" line="49"/>
        <source>Host device (host-only ops):</source>
        <translation>主机设备（仅主机算子）：</translation>
    </message>
    <message>
        <location filename="../app/gui/DeviceDialog.cpp" line="101"/>
        <location filename="../app/gui/DeviceDialog.cpp" line="190"/>
        <source>(automatic)</source>
        <translation>（自动）</translation>
    </message>
    <message>
        <location filename="../app/gui/DeviceDialog.cpp" line="112"/>
        <source>double-click</source>
        <translation>双击</translation>
    </message>
    <message>
        <location filename="../app/gui/DeviceDialog.cpp" line="165"/>
        <source>row %1: a device needs a name without spaces, &apos;:&apos;, &apos;,&apos; or &apos;=&apos;</source>
        <translation>第 %1 行：设备名称不能包含空格、“:”、“,”或“=”</translation>
    </message>
    <message>
        <location filename="../app/gui/DeviceDialog.cpp" line="169"/>
        <source>two devices are called &apos;%1&apos;</source>
        <translation>有两个设备都叫“%1”</translation>
    </message>
    <message>
        <location filename="../app/gui/DeviceDialog.cpp" line="179"/>
        <source>&apos;%1&apos;: memory capacity &apos;%2&apos; is not a size such as 8GiB or 512MB</source>
        <translation>“%1”：内存容量“%2”不是 8GiB 或 512MB 这样的大小</translation>
    </message>
    <message>
        <location filename="../app/gui/DeviceDialog.cpp" line="194"/>
        <source>a plan needs at least one device</source>
        <translation>计划至少需要一个设备</translation>
    </message>
</context>
<context>
    <name>placer::gui::HostsDialog</name>
    <message>
        <location filename="../app/gui/HostsRun.cpp" line="478"/>
        <source>%1 is not a host file (not a regular file of at most 1 MiB)</source>
        <translation>%1 不是主机文件（不是不超过 1 MiB 的普通文件）</translation>
    </message>
    <message>
        <location filename="../app/gui/HostsRun.cpp" line="485"/>
        <source>Cannot read the host file %1: %2</source>
        <translation>无法读取主机文件 %1：%2</translation>
    </message>
    <message>
        <location filename="../app/gui/HostsRun.cpp" line="501"/>
        <source>%1, line %2: %3</source>
        <translation>%1，第 %2 行：%3</translation>
    </message>
    <message>
        <location filename="../app/gui/HostsRun.cpp" line="505"/>
        <source>the line starts with &quot;%1&quot;, not a host name</source>
        <translation>该行以“%1”开头，而不是主机名</translation>
    </message>
    <message>
        <location filename="../app/gui/HostsRun.cpp" line="522"/>
        <source>&quot;%1&quot; is not slots=N or max_slots=N</source>
        <translation>“%1”不是 slots=N 或 max_slots=N</translation>
    </message>
    <message>
        <location filename="../app/gui/HostsRun.cpp" line="529"/>
        <source>&quot;%1&quot; is not a number of slots (1 or more)</source>
        <translation>“%1”不是槽位数（1 或以上）</translation>
    </message>
    <message>
        <location filename="../app/gui/HostsRun.cpp" line="548"/>
        <source>%1 names no host</source>
        <translation>%1 未列出任何主机</translation>
    </message>
    <message>
        <location filename="../app/gui/HostsRun.cpp" line="553"/>
        <source>Run on Hosts</source>
        <translation>在多台主机上运行</translation>
    </message>
    <message>
        <location filename="../app/gui/HostsRun.cpp" line="556"/>
        <source>The plan runs under mpirun: one placer process (rank) per slot, each virtual device on the rank and physical device chosen below. Copies between ranks go over MPI. The model file must be readable at the same path on every host.</source>
        <translation>计划在 mpirun 下运行：每个槽位一个 placer 进程（rank），每个虚拟设备运行在下面选定的 rank 和物理设备上。rank 之间的复制经由 MPI。模型文件必须在每台主机的同一路径下可读。</translation>
    </message>
    <message>
        <location filename="../app/gui/HostsRun.cpp" line="563"/>
        <source>This machine</source>
        <translation>本机</translation>
    </message>
    <message>
        <location filename="../app/gui/HostsRun.cpp" line="566"/>
        <source>Hosts in a file</source>
        <translation>文件中的主机</translation>
    </message>
    <message>
        <location filename="../app/gui/HostsRun.cpp" line="574"/>
        <source>an Open MPI host file: one host a line, slots=N</source>
        <translation>Open MPI 主机文件：每行一台主机，slots=N</translation>
    </message>
    <message>
        <location filename="../app/gui/HostsRun.cpp" line="575"/>
        <source>Browse…</source>
        <translation>浏览…</translation>
    </message>
    <message>
        <location filename="../app/gui/HostsRun.cpp" line="577"/>
        <source>Host file</source>
        <translation>主机文件</translation>
    </message>
    <message>
        <location filename="../app/gui/HostsRun.cpp" line="592"/>
        <source>Ranks:</source>
        <translation>rank 数：</translation>
    </message>
    <message>
        <location filename="../app/gui/HostsRun.cpp" line="601"/>
        <source>Device</source>
        <translation>设备</translation>
    </message>
    <message>
        <location filename="../app/gui/HostsRun.cpp" line="601"/>
        <source>Kind</source>
        <translation>类型</translation>
    </message>
    <message>
        <location filename="../app/gui/HostsRun.cpp" line="601"/>
        <source>Rank</source>
        <translation>rank</translation>
    </message>
    <message>
        <location filename="../app/gui/HostsRun.cpp" line="601"/>
        <source>Physical device there</source>
        <translation>该处的物理设备</translation>
    </message>
    <message>
        <location filename="../app/gui/HostsRun.cpp" line="601"/>
        <source>Host</source>
        <translation>主机</translation>
    </message>
    <message>
        <location filename="../app/gui/HostsRun.cpp" line="649"/>
        <source>Run</source>
        <translation>运行</translation>
    </message>
    <message>
        <location filename="../app/gui/HostsRun.cpp" line="679"/>
        <source>Every rank on this machine (%1).</source>
        <translation>所有 rank 都在本机（%1）。</translation>
    </message>
    <message>
        <location filename="../app/gui/HostsRun.cpp" line="681"/>
        <source>Choose a host file.</source>
        <translation>请选择主机文件。</translation>
    </message>
    <message numerus="yes">
        <location filename="../app/gui/HostsRun.cpp" line="691"/>
        <source>%1 (%n slot(s))</source>
        <translation>
            <numerusform>%1（%n 个槽位）</numerusform>
        </translation>
    </message>
    <message>
        <location filename="../app/gui/HostsRun.cpp" line="693"/>
        <source>%1 (a slot per core)</source>
        <translation>%1（每个核心一个槽位）</translation>
    </message>
    <message numerus="yes">
        <location filename="../app/gui/HostsRun.cpp" line="694"/>
        <source>%n host(s): %1.</source>
        <translation>
            <numerusform>%n 台主机：%1。</numerusform>
        </translation>
    </message>
    <message>
        <location filename="../app/gui/HostsRun.cpp" line="698"/>
        <source>%1 ranks on %2 slots: mpirun starts more than one rank on a slot.</source>
        <translation>%1 个 rank 对应 %2 个槽位：mpirun 会在一个槽位上启动多个 rank。</translation>
    </message>
    <message>
        <location filename="../app/gui/HostsRun.cpp" line="715"/>
        <source>chosen by mpirun</source>
        <translation>由 mpirun 决定</translation>
    </message>
</context>
<context>
    <name>placer::gui::HostsRunner</name>
    <message>
        <location filename="../app/gui/HostsRun.cpp" line="246"/>
        <source>rank %1</source>
        <translation>rank %1</translation>
    </message>
    <message>
        <location filename="../app/gui/HostsRun.cpp" line="247"/>
        <source>rank %1 on %2</source>
        <translation>%2 上的 rank %1</translation>
    </message>
    <message numerus="yes">
        <location filename="../app/gui/HostsRun.cpp" line="260"/>
        <source>&lt;b&gt;Latency&lt;/b&gt; %1 ms median (min %2, max %3) over %4 iterations, on %n rank(s)</source>
        <translation>
            <numerusform>&lt;b&gt;延迟&lt;/b&gt; 中位数 %1 ms（最小 %2，最大 %3），%4 次迭代，%n 个 rank</numerusform>
        </translation>
    </message>
    <message>
        <location filename="../app/gui/HostsRun.cpp" line="269"/>
        <source>device</source>
        <translation>设备</translation>
    </message>
    <message>
        <location filename="../app/gui/HostsRun.cpp" line="269"/>
        <source>runs on</source>
        <translation>运行于</translation>
    </message>
    <message>
        <location filename="../app/gui/HostsRun.cpp" line="269"/>
        <source>host</source>
        <translation>主机</translation>
    </message>
    <message>
        <location filename="../app/gui/HostsRun.cpp" line="270"/>
        <source>busy</source>
        <translation>忙碌</translation>
    </message>
    <message>
        <location filename="../app/gui/HostsRun.cpp" line="286"/>
        <source>Rank %1 (%2) → rank %3 (%4): %5 copies, %6 bytes, %7 ms&lt;br&gt;</source>
        <translation>rank %1（%2）→ rank %3（%4）：%5 次复制，%6 字节，%7 ms&lt;br&gt;</translation>
    </message>
    <message>
        <location filename="../app/gui/HostsRun.cpp" line="298"/>
        <source>Outputs not checked against a reference.</source>
        <translation>输出未与参考结果比对。</translation>
    </message>
    <message>
        <location filename="../app/gui/HostsRun.cpp" line="300"/>
        <source>Outputs match the single-device reference (max abs diff %1).</source>
        <translation>输出与单设备参考结果一致（最大绝对差 %1）。</translation>
    </message>
    <message>
        <location filename="../app/gui/HostsRun.cpp" line="303"/>
        <source>&lt;b&gt;Outputs differ from the single-device reference&lt;/b&gt;: %1</source>
        <translation>&lt;b&gt;输出与单设备参考结果不一致&lt;/b&gt;：%1</translation>
    </message>
    <message>
        <location filename="../app/gui/HostsRun.cpp" line="352"/>
        <source>A run on hosts is already going on.</source>
        <translation>已有一次多主机运行正在进行。</translation>
    </message>
    <message>
        <location filename="../app/gui/HostsRun.cpp" line="358"/>
        <source>Cannot make a folder for the run&apos;s report: %1</source>
        <translation>无法为运行报告创建文件夹：%1</translation>
    </message>
    <message>
        <location filename="../app/gui/HostsRun.cpp" line="385"/>
        <source>Cannot start %1: %2 (is Open MPI installed?)</source>
        <translation>无法启动 %1：%2（是否已安装 Open MPI？）</translation>
    </message>
    <message>
        <location filename="../app/gui/HostsRun.cpp" line="421"/>
        <source>mpirun ended with status %1:
%2</source>
        <translation>mpirun 以状态 %1 结束：
%2</translation>
    </message>
    <message>
        <location filename="../app/gui/HostsRun.cpp" line="427"/>
        <source>the run wrote no %1</source>
        <translation>运行未写出 %1</translation>
    </message>
    <message>
        <location filename="../app/gui/HostsRun.cpp" line="443"/>
        <source>The run on hosts ended, but %1.
%2</source>
        <translation>多主机运行已结束，但%1。
%2</translation>
    </message>
</context>
<context>
    <name>placer::gui::MainWindow</name>
    <message>
        <location filename="../app/gui/MainWindow.cpp" line="71"/>
        <source>Placement Explorer</source>
        <translation>Placement Explorer</translation>
    </message>
    <message>
        <location filename="../app/gui/MainWindow.cpp" line="79"/>
        <source>&lt;b&gt;To place work&lt;/b&gt;, drag a device chip from the &lt;i&gt;Devices&lt;/i&gt; panel onto a node (or onto a selection). The planner re-infers everything else at once: fills show each node&apos;s device, dots mark pins, badges on edges are the copies the plan needs, and &lt;i&gt;Conflicts and notes&lt;/i&gt; says what it decided. Ctrl+Z undoes.</source>
        <translation>&lt;b&gt;分配工作：&lt;/b&gt;把&lt;i&gt;设备&lt;/i&gt;面板中的设备标签拖到一个节点（或一组选中的节点）上。规划器会立即重新推断其余部分：填充色表示每个节点的设备，圆点标记固定，边上的徽标是计划需要的拷贝，&lt;i&gt;冲突与说明&lt;/i&gt;给出它的决定。Ctrl+Z 撤销。</translation>
    </message>
    <message>
        <location filename="../app/gui/MainWindow.cpp" line="113"/>
        <source>laying out</source>
        <translation>正在布局</translation>
    </message>
    <message>
        <location filename="../app/gui/MainWindow.cpp" line="181"/>
        <source>Devices</source>
        <translation>设备</translation>
    </message>
    <message>
        <location filename="../app/gui/MainWindow.cpp" line="190"/>
        <source>Rules</source>
        <translation>规则</translation>
    </message>
    <message>
        <location filename="../app/gui/MainWindow.cpp" line="195"/>
        <source>Conflicts and notes</source>
        <translation>冲突与说明</translation>
    </message>
    <message>
        <location filename="../app/gui/MainWindow.cpp" line="200"/>
        <source>Properties</source>
        <translation>属性</translation>
    </message>
    <message>
        <location filename="../app/gui/MainWindow.cpp" line="202"/>
        <source>&lt;opened&gt;</source>
        <translation>&lt;已打开&gt;</translation>
    </message>
    <message>
        <location filename="../app/gui/MainWindow.cpp" line="204"/>
        <source>History</source>
        <translation>历史</translation>
    </message>
    <message>
        <location filename="../app/gui/MainWindow.cpp" line="217"/>
        <source>Run</source>
        <translation>运行</translation>
    </message>
    <message>
        <location filename="../app/gui/MainWindow.cpp" line="468"/>
        <source>Export failed</source>
        <translation>导出失败</translation>
    </message>
    <message>
        <location filename="../app/gui/MainWindow.cpp" line="236"/>
        <source>Plans</source>
        <translation>计划</translation>
    </message>
    <message>
        <location filename="../app/gui/MainWindow.cpp" line="229"/>
        <source>Restored the unsaved changes</source>
        <translation>已恢复未保存的更改</translation>
    </message>
    <message>
        <location filename="../app/gui/MainWindow.cpp" line="245"/>
        <source>Timeline</source>
        <translation>时间线</translation>
    </message>
    <message>
        <location filename="../app/gui/MainWindow.cpp" line="249"/>
        <source>&amp;File</source>
        <translation>文件(&amp;F)</translation>
    </message>
    <message>
        <location filename="../app/gui/MainWindow.cpp" line="250"/>
        <source>&amp;Open…</source>
        <translation>打开(&amp;O)…</translation>
    </message>
    <message>
        <location filename="../app/gui/MainWindow.cpp" line="252"/>
        <source>Open &amp;Recent</source>
        <translation>最近打开(&amp;R)</translation>
    </message>
    <message>
        <location filename="../app/gui/MainWindow.cpp" line="253"/>
        <source>Open the &amp;Example</source>
        <translation>打开示例(&amp;E)</translation>
    </message>
    <message>
        <location filename="../app/gui/MainWindow.cpp" line="255"/>
        <source>&amp;Save Plan</source>
        <translation>保存计划(&amp;S)</translation>
    </message>
    <message>
        <location filename="../app/gui/MainWindow.cpp" line="257"/>
        <source>Save Plan &amp;As…</source>
        <translation>计划另存为(&amp;A)…</translation>
    </message>
    <message>
        <location filename="../app/gui/MainWindow.cpp" line="259"/>
        <source>Open &amp;Workspace…</source>
        <translation>打开工作区(&amp;W)…</translation>
    </message>
    <message>
        <location filename="../app/gui/MainWindow.cpp" line="260"/>
        <source>&amp;Export</source>
        <translation>导出(&amp;E)</translation>
    </message>
    <message>
        <location filename="../app/gui/MainWindow.cpp" line="272"/>
        <source>&amp;Quit</source>
        <translation>退出(&amp;Q)</translation>
    </message>
    <message>
        <location filename="../app/gui/MainWindow.cpp" line="274"/>
        <source>&amp;Edit</source>
        <translation>编辑(&amp;E)</translation>
    </message>
    <message>
        <location filename="../app/gui/MainWindow.cpp" line="275"/>
        <source>&amp;Undo</source>
        <translation>撤销(&amp;U)</translation>
    </message>
    <message>
        <location filename="../app/gui/MainWindow.cpp" line="277"/>
        <source>&amp;Redo</source>
        <translation>重做(&amp;R)</translation>
    </message>
    <message>
        <location filename="../app/gui/MainWindow.cpp" line="282"/>
        <source>&amp;Clear Pins of Selection</source>
        <translation>清除所选节点的固定(&amp;C)</translation>
    </message>
    <message>
        <location filename="../app/gui/MainWindow.cpp" line="285"/>
        <source>&amp;Split Across Devices…</source>
        <translation>跨设备拆分(&amp;S)…</translation>
    </message>
    <message>
        <location filename="../app/gui/MainWindow.cpp" line="287"/>
        <source>Remove Split of Selection</source>
        <translation>移除所选内容的拆分</translation>
    </message>
    <message>
        <location filename="../app/gui/MainWindow.cpp" line="289"/>
        <source>Copy Plan as Command &amp;Line</source>
        <translation>将计划复制为命令行(&amp;L)</translation>
    </message>
    <message>
        <location filename="../app/gui/MainWindow.cpp" line="292"/>
        <source>Copied: %1</source>
        <translation>已复制：%1</translation>
    </message>
    <message>
        <location filename="../app/gui/MainWindow.cpp" line="296"/>
        <source>The placer run command that plans and runs what this window shows</source>
        <translation>规划并运行此窗口所示内容的 placer run 命令</translation>
    </message>
    <message>
        <location filename="../app/gui/MainWindow.cpp" line="298"/>
        <source>&amp;Find…</source>
        <translation>查找(&amp;F)…</translation>
    </message>
    <message>
        <location filename="../app/gui/MainWindow.cpp" line="304"/>
        <source>Find &amp;Next</source>
        <translation>查找下一个(&amp;N)</translation>
    </message>
    <message>
        <location filename="../app/gui/MainWindow.cpp" line="306"/>
        <source>Find &amp;Previous</source>
        <translation>查找上一个(&amp;P)</translation>
    </message>
    <message>
        <location filename="../app/gui/MainWindow.cpp" line="309"/>
        <source>&amp;View</source>
        <translation>视图(&amp;V)</translation>
    </message>
    <message>
        <location filename="../app/gui/MainWindow.cpp" line="310"/>
        <source>&amp;Fit to Window</source>
        <translation>适应窗口(&amp;F)</translation>
    </message>
    <message>
        <location filename="../app/gui/MainWindow.cpp" line="312"/>
        <source>Fit &amp;Selection</source>
        <translation>适应所选(&amp;S)</translation>
    </message>
    <message>
        <location filename="../app/gui/MainWindow.cpp" line="315"/>
        <source>&amp;Collapse Groups</source>
        <translation>折叠分组(&amp;C)</translation>
    </message>
    <message>
        <location filename="../app/gui/MainWindow.cpp" line="316"/>
        <source>E&amp;xpand All Groups</source>
        <translation>展开所有分组(&amp;X)</translation>
    </message>
    <message>
        <location filename="../app/gui/MainWindow.cpp" line="319"/>
        <source>Zoom &amp;In</source>
        <translation>放大(&amp;I)</translation>
    </message>
    <message>
        <location filename="../app/gui/MainWindow.cpp" line="321"/>
        <source>Zoom &amp;Out</source>
        <translation>缩小(&amp;O)</translation>
    </message>
    <message>
        <location filename="../app/gui/MainWindow.cpp" line="325"/>
        <source>&amp;Devices</source>
        <translation>设备(&amp;D)</translation>
    </message>
    <message>
        <location filename="../app/gui/MainWindow.cpp" line="326"/>
        <source>&amp;Edit Devices…</source>
        <translation>编辑设备(&amp;E)…</translation>
    </message>
    <message>
        <location filename="../app/gui/MainWindow.cpp" line="328"/>
        <source>&amp;Calibrate This Machine…</source>
        <translation>校准本机(&amp;C)…</translation>
    </message>
    <message>
        <location filename="../app/gui/MainWindow.cpp" line="332"/>
        <source>&amp;Pin Selection To</source>
        <translation>将所选固定到(&amp;P)</translation>
    </message>
    <message>
        <location filename="../app/gui/MainWindow.cpp" line="334"/>
        <source>Device %1</source>
        <translation>设备 %1</translation>
    </message>
    <message>
        <location filename="../app/gui/MainWindow.cpp" line="347"/>
        <source>Device %1 (none)</source>
        <translation>设备 %1（无）</translation>
    </message>
    <message>
        <location filename="../app/gui/MainWindow.cpp" line="351"/>
        <source>&amp;Run</source>
        <translation>运行(&amp;R)</translation>
    </message>
    <message>
        <location filename="../app/gui/MainWindow.cpp" line="352"/>
        <source>&amp;Run the Plan</source>
        <translation>运行计划(&amp;R)</translation>
    </message>
    <message>
        <location filename="../app/gui/MainWindow.cpp" line="354"/>
        <source>&amp;Cancel the Run</source>
        <translation>取消运行(&amp;C)</translation>
    </message>
    <message>
        <location filename="../app/gui/MainWindow.cpp" line="356"/>
        <source>Run on &amp;Hosts…</source>
        <translation>在多台主机上运行(&amp;H)…</translation>
    </message>
    <message>
        <location filename="../app/gui/MainWindow.cpp" line="359"/>
        <source>Main</source>
        <translation>主工具栏</translation>
    </message>
    <message>
        <location filename="../app/gui/MainWindow.cpp" line="364"/>
        <source>Planner: </source>
        <translation>规划器：</translation>
    </message>
    <message>
        <location filename="../app/gui/MainWindow.cpp" line="375"/>
        <source>Find node, op or attribute (Ctrl+F)</source>
        <translation>查找节点、算子或属性 (Ctrl+F)</translation>
    </message>
    <message numerus="yes">
        <location filename="../app/gui/MainWindow.cpp" line="399"/>
        <source>There is no device %1: the palette has %n device(s)</source>
        <translation>
            <numerusform>没有设备 %1：调色板中有 %n 个设备</numerusform>
        </translation>
    </message>
    <message>
        <location filename="../app/gui/MainWindow.cpp" line="406"/>
        <source>Select the nodes to pin first</source>
        <translation>请先选择要固定的节点</translation>
    </message>
    <message>
        <location filename="../app/gui/MainWindow.cpp" line="423"/>
        <source>Select the ops to split first</source>
        <translation>请先选择要拆分的算子</translation>
    </message>
    <message>
        <location filename="../app/gui/MainWindow.cpp" line="545"/>
        <source>Calibrate this machine?</source>
        <translation>校准本机？</translation>
    </message>
    <message>
        <location filename="../app/gui/MainWindow.cpp" line="546"/>
        <source>Auto placement predicts each op&apos;s time from the devices&apos; speed. This machine has not been measured yet, so it assumes typical figures. Measure its devices now? It takes a few seconds; Devices ▸ Calibrate does it later.</source>
        <translation>自动放置根据设备速度预测每个算子的时间。本机尚未测量，因此使用典型数值。现在测量其设备吗？需要几秒钟；也可以稍后通过“设备 ▸ 校准”进行。</translation>
    </message>
    <message>
        <location filename="../app/gui/MainWindow.cpp" line="559"/>
        <location filename="../app/gui/MainWindow.cpp" line="589"/>
        <location filename="../app/gui/MainWindow.cpp" line="593"/>
        <source>Calibrate</source>
        <translation>校准</translation>
    </message>
    <message>
        <location filename="../app/gui/MainWindow.cpp" line="559"/>
        <source>No workspace is open to keep it in.</source>
        <translation>没有打开的工作区可供保存。</translation>
    </message>
    <message>
        <location filename="../app/gui/MainWindow.cpp" line="562"/>
        <source>Measuring this machine&apos;s devices…</source>
        <translation>正在测量本机设备…</translation>
    </message>
    <message>
        <location filename="../app/gui/MainWindow.cpp" line="589"/>
        <source>Calibration failed: %1</source>
        <translation>校准失败：%1</translation>
    </message>
    <message>
        <location filename="../app/gui/MainWindow.cpp" line="599"/>
        <source>Calibrated %1: auto placement now uses its measured rates</source>
        <translation>已校准 %1：自动放置现在使用实测数值</translation>
    </message>
    <message>
        <location filename="../app/gui/MainWindow.cpp" line="663"/>
        <source>A run on hosts is already going on</source>
        <translation>已有一次多主机运行正在进行</translation>
    </message>
    <message numerus="yes">
        <location filename="../app/gui/MainWindow.cpp" line="701"/>
        <source>Ran on %n rank(s): %1 ms median</source>
        <translation>
            <numerusform>在 %n 个 rank 上运行：中位数 %1 ms</numerusform>
        </translation>
    </message>
    <message>
        <location filename="../app/gui/MainWindow.cpp" line="707"/>
        <source>The run on hosts failed</source>
        <translation>多主机运行失败</translation>
    </message>
    <message>
        <location filename="../app/gui/MainWindow.cpp" line="711"/>
        <source>The run on hosts was cancelled on every rank</source>
        <translation>多主机运行已在每个 rank 上取消</translation>
    </message>
    <message numerus="yes">
        <location filename="../app/gui/MainWindow.cpp" line="719"/>
        <source>Starting %n rank(s) with mpirun…</source>
        <translation>
            <numerusform>正在用 mpirun 启动 %n 个 rank…</numerusform>
        </translation>
    </message>
    <message>
        <location filename="../app/gui/MainWindow.cpp" line="719"/>
        <source>Cancel</source>
        <translation>取消</translation>
    </message>
    <message>
        <location filename="../app/gui/MainWindow.cpp" line="721"/>
        <source>Run on Hosts</source>
        <translation>在多台主机上运行</translation>
    </message>
    <message>
        <location filename="../app/gui/MainWindow.cpp" line="107"/>
        <source>loading</source>
        <translation>正在加载</translation>
    </message>
    <message>
        <location filename="../app/gui/MainWindow.cpp" line="109"/>
        <source>Reading %1…</source>
        <translation>正在读取 %1…</translation>
    </message>
    <message>
        <location filename="../app/gui/MainWindow.cpp" line="104"/>
        <location filename="../app/gui/MainWindow.cpp" line="223"/>
        <location filename="../app/gui/MainWindow.cpp" line="227"/>
        <source>%1[*] — Placement Explorer</source>
        <translation>%1[*] — Placement Explorer</translation>
    </message>
    <message>
        <location filename="../app/gui/MainWindow.cpp" line="233"/>
        <source>Saved plan &apos;%1&apos;</source>
        <translation>已保存计划“%1”</translation>
    </message>
    <message>
        <location filename="../app/gui/UndoCommands.cpp" line="212"/>
        <source>Pin %1 to %2</source>
        <translation>将 %1 固定到 %2</translation>
    </message>
    <message>
        <location filename="../app/gui/MainWindow.cpp" line="451"/>
        <source>No node matches &apos;%1&apos;</source>
        <translation>没有节点匹配“%1”</translation>
    </message>
    <message>
        <location filename="../app/gui/MainWindow.cpp" line="189"/>
        <source>Bad rule</source>
        <translation>无效规则</translation>
    </message>
    <message>
        <location filename="../app/gui/MainWindow.cpp" line="265"/>
        <source>Export</source>
        <translation>导出</translation>
    </message>
    <message>
        <location filename="../app/gui/MainWindow.cpp" line="471"/>
        <source>Exported %1</source>
        <translation>已导出 %1</translation>
    </message>
    <message>
        <location filename="../app/gui/MainWindow.cpp" line="478"/>
        <source>Unsaved plan</source>
        <translation>未保存的计划</translation>
    </message>
    <message>
        <location filename="../app/gui/MainWindow.cpp" line="479"/>
        <source>The plan has changes that are not saved. Save them in the workspace?</source>
        <translation>计划有未保存的更改。要保存到工作区吗？</translation>
    </message>
    <message>
        <location filename="../app/gui/MainWindow.cpp" line="526"/>
        <source>Run finished: %1 ms median; predicted %2 ms (%3%4 %)</source>
        <translation>运行完成：中位数 %1 ms；预测 %2 ms（%3%4 %）</translation>
    </message>
    <message>
        <location filename="../app/gui/MainWindow.cpp" line="533"/>
        <source>Run finished: %1 ms median</source>
        <translation>运行完成：中位数 %1 毫秒</translation>
    </message>
    <message>
        <location filename="../app/gui/UndoCommands.cpp" line="32"/>
        <source>Planner mode: demand</source>
        <translation>规划模式：demand</translation>
    </message>
    <message>
        <location filename="../app/gui/UndoCommands.cpp" line="34"/>
        <source>Planner mode: unify</source>
        <translation>规划模式：unify</translation>
    </message>
    <message>
        <location filename="../app/gui/UndoCommands.cpp" line="35"/>
        <source>Auto-place</source>
        <translation>自动放置</translation>
    </message>
    <message>
        <location filename="../app/gui/UndoCommands.cpp" line="61"/>
        <source>Stream %1 batches</source>
        <translation>流式执行 %1 个批次</translation>
    </message>
    <message>
        <location filename="../app/gui/UndoCommands.cpp" line="63"/>
        <source>Stop streaming</source>
        <translation>停止流式执行</translation>
    </message>
    <message>
        <location filename="../app/gui/UndoCommands.cpp" line="57"/>
        <source>Pipeline in %1 micro-batches</source>
        <translation>以 %1 个微批次流水线执行</translation>
    </message>
    <message>
        <location filename="../app/gui/UndoCommands.cpp" line="60"/>
        <source>Stop pipelining</source>
        <translation>停止流水线执行</translation>
    </message>
    <message>
        <location filename="../app/gui/UndoCommands.cpp" line="93"/>
        <source>Change rules</source>
        <translation>更改规则</translation>
    </message>
    <message numerus="yes">
        <location filename="../app/gui/UndoCommands.cpp" line="173"/>
        <source>Split %n op(s) across %1</source>
        <translation>
            <numerusform>将 %n 个算子拆分到 %1</numerusform>
        </translation>
    </message>
    <message>
        <location filename="../app/gui/UndoCommands.cpp" line="186"/>
        <source>Remove split</source>
        <translation>移除拆分</translation>
    </message>
    <message>
        <location filename="../app/gui/UndoCommands.cpp" line="192"/>
        <source>Edit devices</source>
        <translation>编辑设备</translation>
    </message>
    <message numerus="yes">
        <location filename="../app/gui/UndoCommands.cpp" line="214"/>
        <source>Pin %n node(s) to %1</source>
        <translation>
            <numerusform>将 %n 个节点固定到 %1</numerusform>
        </translation>
    </message>
    <message numerus="yes">
        <location filename="../app/gui/UndoCommands.cpp" line="232"/>
        <source>Clear %n pin(s)</source>
        <translation>
            <numerusform>清除 %n 个固定</numerusform>
        </translation>
    </message>
</context>
<context>
    <name>placer::gui::ModelOpener</name>
    <message>
        <location filename="../app/gui/ModelOpener.cpp" line="49"/>
        <location filename="../app/gui/ModelOpener.cpp" line="69"/>
        <source>Cannot open %1</source>
        <translation>无法打开 %1</translation>
    </message>
    <message>
        <location filename="../app/gui/ModelOpener.cpp" line="58"/>
        <source>Open a graph</source>
        <translation>打开图</translation>
    </message>
    <message>
        <location filename="../app/gui/ModelOpener.cpp" line="59"/>
        <source>Graphs (*.relay *.txt *.onnx *.json);;All files (*)</source>
        <translation>图 (*.relay *.txt *.onnx *.json);;所有文件 (*)</translation>
    </message>
    <message>
        <location filename="../app/gui/ModelOpener.cpp" line="83"/>
        <source>Cannot open the example</source>
        <translation>无法打开示例</translation>
    </message>
</context>
<context>
    <name>placer::gui::PlanBrowser</name>
    <message>
        <location filename="../app/gui/PlanBrowser.cpp" line="18"/>
        <source>Plan</source>
        <translation>计划</translation>
    </message>
    <message>
        <location filename="../app/gui/PlanBrowser.cpp" line="18"/>
        <source>Graph</source>
        <translation>图</translation>
    </message>
    <message>
        <location filename="../app/gui/PlanBrowser.cpp" line="18"/>
        <source>Devices</source>
        <translation>设备</translation>
    </message>
    <message>
        <location filename="../app/gui/PlanBrowser.cpp" line="18"/>
        <source>Copies</source>
        <translation>拷贝</translation>
    </message>
    <message>
        <location filename="../app/gui/PlanBrowser.cpp" line="19"/>
        <source>Copied</source>
        <translation>已拷贝</translation>
    </message>
    <message>
        <location filename="../app/gui/PlanBrowser.cpp" line="19"/>
        <source>Last run</source>
        <translation>最近运行</translation>
    </message>
    <message>
        <location filename="../app/gui/PlanBrowser.cpp" line="19"/>
        <source>Updated</source>
        <translation>更新时间</translation>
    </message>
    <message>
        <location filename="../app/gui/PlanBrowser.cpp" line="29"/>
        <source>Open</source>
        <translation>打开</translation>
    </message>
    <message>
        <location filename="../app/gui/PlanBrowser.cpp" line="30"/>
        <source>Rename…</source>
        <translation>重命名…</translation>
    </message>
    <message>
        <location filename="../app/gui/PlanBrowser.cpp" line="31"/>
        <source>Duplicate…</source>
        <translation>复制…</translation>
    </message>
    <message>
        <location filename="../app/gui/PlanBrowser.cpp" line="32"/>
        <source>Delete…</source>
        <translation>删除…</translation>
    </message>
    <message>
        <location filename="../app/gui/PlanBrowser.cpp" line="33"/>
        <source>Compare</source>
        <translation>比较</translation>
    </message>
    <message>
        <location filename="../app/gui/PlanBrowser.cpp" line="44"/>
        <source>Select two plans to compare them.</source>
        <translation>选择两个计划以进行比较。</translation>
    </message>
    <message>
        <location filename="../app/gui/PlanBrowser.cpp" line="48"/>
        <source>Select one plan.</source>
        <translation>选择一个计划。</translation>
    </message>
</context>
<context>
    <name>placer::gui::RunPanel</name>
    <message>
        <location filename="../app/gui/RunPanel.cpp" line="37"/>
        <source>Run</source>
        <translation>运行</translation>
    </message>
    <message>
        <location filename="../app/gui/RunPanel.cpp" line="38"/>
        <source>Cancel</source>
        <translation>取消</translation>
    </message>
    <message>
        <location filename="../app/gui/RunPanel.cpp" line="43"/>
        <source>Input</source>
        <translation>输入</translation>
    </message>
    <message>
        <location filename="../app/gui/RunPanel.cpp" line="43"/>
        <source>Data</source>
        <translation>数据</translation>
    </message>
    <message>
        <location filename="../app/gui/RunPanel.cpp" line="46"/>
        <source>Data for each input: a .npy file, a shape such as 2,16,64 for random data at that shape, or nothing for random data at the planned shape. Other shapes are planned for when the run starts.</source>
        <translation>每个输入的数据：一个 .npy 文件、一个形状（如 2,16,64，生成该形状的随机数据），或留空（按规划形状生成随机数据）。其他形状会在运行开始时重新规划。</translation>
    </message>
    <message>
        <location filename="../app/gui/RunPanel.cpp" line="53"/>
        <source>.npy…</source>
        <translation>.npy…</translation>
    </message>
    <message>
        <location filename="../app/gui/RunPanel.cpp" line="55"/>
        <source>Choose a .npy file for the selected input</source>
        <translation>为所选输入选择 .npy 文件</translation>
    </message>
    <message>
        <location filename="../app/gui/RunPanel.cpp" line="62"/>
        <source>Data for an input</source>
        <translation>输入数据</translation>
    </message>
    <message>
        <location filename="../app/gui/RunPanel.cpp" line="63"/>
        <source>NumPy arrays (*.npy)</source>
        <translation>NumPy 数组 (*.npy)</translation>
    </message>
    <message>
        <location filename="../app/gui/RunPanel.cpp" line="81"/>
        <source>Iterations:</source>
        <translation>迭代次数：</translation>
    </message>
    <message>
        <location filename="../app/gui/RunPanel.cpp" line="79"/>
        <source>Warm-up:</source>
        <translation>预热：</translation>
    </message>
    <message>
        <location filename="../app/gui/RunPanel.cpp" line="85"/>
        <source>1 (not pipelined)</source>
        <translation>1（不使用流水线）</translation>
    </message>
    <message>
        <location filename="../app/gui/RunPanel.cpp" line="87"/>
        <source>Pipeline the plan: the batch is cut into this many micro-batches that flow through the devices, each device working on one while the next works on the one before. The plan and its predicted timeline follow at once.</source>
        <translation>以流水线执行计划：批次被切分为这么多个微批次依次流经各设备，每个设备处理一个微批次的同时，下一个设备处理前一个。计划及其预测时间线立即随之更新。</translation>
    </message>
    <message>
        <location filename="../app/gui/RunPanel.cpp" line="93"/>
        <source>1 (one batch)</source>
        <translation>1（一个批次）</translation>
    </message>
    <message>
        <location filename="../app/gui/RunPanel.cpp" line="95"/>
        <source>Throughput mode: this many batches back to back through the pipeline, the next entering the first device while the last drains. The run reports items per second and each batch&apos;s latency.</source>
        <translation>吞吐模式：这么多个批次首尾相接地流经流水线，下一个批次进入第一个设备时上一个正在排空。运行报告每秒处理的条目数和每个批次的延迟。</translation>
    </message>
    <message>
        <location filename="../app/gui/RunPanel.cpp" line="100"/>
        <source>Stream:</source>
        <translation>流：</translation>
    </message>
    <message>
        <location filename="../app/gui/RunPanel.cpp" line="102"/>
        <source>Micro-batches:</source>
        <translation>微批次：</translation>
    </message>
    <message>
        <location filename="../app/gui/RunPanel.cpp" line="138"/>
        <source>Export trace…</source>
        <translation>导出跟踪…</translation>
    </message>
    <message>
        <location filename="../app/gui/RunPanel.cpp" line="139"/>
        <source>Export CSV…</source>
        <translation>导出 CSV…</translation>
    </message>
    <message>
        <location filename="../app/gui/RunPanel.cpp" line="146"/>
        <source>Export trace</source>
        <translation>导出跟踪</translation>
    </message>
    <message>
        <location filename="../app/gui/RunPanel.cpp" line="147"/>
        <source>Chrome trace (*.json)</source>
        <translation>Chrome 跟踪 (*.json)</translation>
    </message>
    <message>
        <location filename="../app/gui/RunPanel.cpp" line="149"/>
        <location filename="../app/gui/RunPanel.cpp" line="155"/>
        <source>Export failed</source>
        <translation>导出失败</translation>
    </message>
    <message>
        <location filename="../app/gui/RunPanel.cpp" line="149"/>
        <location filename="../app/gui/RunPanel.cpp" line="155"/>
        <source>Cannot write %1 (has the plan run?)</source>
        <translation>无法写入 %1（计划运行过吗？）</translation>
    </message>
    <message>
        <location filename="../app/gui/RunPanel.cpp" line="153"/>
        <source>Export timings</source>
        <translation>导出耗时</translation>
    </message>
    <message>
        <location filename="../app/gui/RunPanel.cpp" line="153"/>
        <source>CSV (*.csv)</source>
        <translation>CSV (*.csv)</translation>
    </message>
    <message>
        <location filename="../app/gui/RunPanel.cpp" line="158"/>
        <source>loading weights %p%</source>
        <translation>正在加载权重 %p%</translation>
    </message>
    <message>
        <location filename="../app/gui/RunPanel.cpp" line="163"/>
        <source>%p%</source>
        <translation>%p%</translation>
    </message>
    <message>
        <location filename="../app/gui/RunPanel.cpp" line="175"/>
        <location filename="../app/gui/RunPanel.cpp" line="233"/>
        <location filename="../app/gui/RunPanel.cpp" line="246"/>
        <source>Cannot run</source>
        <translation>无法运行</translation>
    </message>
    <message>
        <location filename="../app/gui/RunPanel.cpp" line="190"/>
        <source>&lt;i&gt;Running…&lt;/i&gt;</source>
        <translation>&lt;i&gt;正在运行…&lt;/i&gt;</translation>
    </message>
    <message>
        <location filename="../app/gui/RunPanel.cpp" line="210"/>
        <source>Planned as %1</source>
        <translation>规划为 %1</translation>
    </message>
    <message>
        <location filename="../app/gui/RunPanel.cpp" line="234"/>
        <source>Input %1: %2</source>
        <translation>输入 %1：%2</translation>
    </message>
    <message>
        <location filename="../app/gui/RunPanel.cpp" line="247"/>
        <source>Input %1: &apos;%2&apos; is neither a .npy file nor a shape such as 2,16,64</source>
        <translation>输入 %1：“%2”既不是 .npy 文件，也不是 2,16,64 这样的形状</translation>
    </message>
    <message>
        <location filename="../app/gui/RunPanel.cpp" line="269"/>
        <source>&lt;i&gt;The run was cancelled.&lt;/i&gt;</source>
        <translation>&lt;i&gt;运行已取消。&lt;/i&gt;</translation>
    </message>
    <message>
        <location filename="../app/gui/RunPanel.cpp" line="265"/>
        <source>The run failed</source>
        <translation>运行失败</translation>
    </message>
    <message>
        <location filename="../app/gui/RunPanel.cpp" line="131"/>
        <source>&lt;i&gt;Runs execute the plan: cpu devices on the host, cuda devices on their GPU where this machine has one, the others on virtual CPUs. Per-node times overlay the graph, the timeline shows each device.&lt;/i&gt;</source>
        <translation>&lt;i&gt;运行会执行计划：cpu 设备在主机上，本机有 GPU 时 cuda 设备在其 GPU 上，其余设备在虚拟 CPU 上。每个节点的耗时叠加在图上，时间线显示每个设备。&lt;/i&gt;</translation>
    </message>
    <message>
        <location filename="../app/gui/RunPanel.cpp" line="313"/>
        <source>%1 predicted</source>
        <translation>%1 预测</translation>
    </message>
    <message>
        <location filename="../app/gui/RunPanel.cpp" line="389"/>
        <source>µb%1 %2</source>
        <translation>微批%1 %2</translation>
    </message>
    <message>
        <location filename="../app/gui/RunPanel.cpp" line="361"/>
        <source>%1: %2 idle %3 predicted</source>
        <translation>%1：%2 空闲 %3（预测）</translation>
    </message>
    <message>
        <location filename="../app/gui/RunPanel.cpp" line="369"/>
        <source>waiting</source>
        <translation>等待</translation>
    </message>
    <message>
        <location filename="../app/gui/RunPanel.cpp" line="370"/>
        <source>bubble (fill)</source>
        <translation>气泡（填充）</translation>
    </message>
    <message>
        <location filename="../app/gui/RunPanel.cpp" line="371"/>
        <source>bubble</source>
        <translation>气泡</translation>
    </message>
    <message>
        <location filename="../app/gui/RunPanel.cpp" line="375"/>
        <source>bubble (drain)</source>
        <translation>气泡（排空）</translation>
    </message>
    <message>
        <location filename="../app/gui/RunPanel.cpp" line="399"/>
        <source>%1 (%2) on %3: %4 predicted%5</source>
        <translation>%1（%2）在 %3 上：预测 %4%5</translation>
    </message>
    <message>
        <location filename="../app/gui/RunPanel.cpp" line="403"/>
        <source> (from earlier runs)</source>
        <translation>（来自之前的运行）</translation>
    </message>
    <message numerus="yes">
        <location filename="../app/gui/RunPanel.cpp" line="503"/>
        <source>&lt;p&gt;&lt;b&gt;Latency&lt;/b&gt; %1 ms median (min %2, max %3) over %n iteration(s)&lt;/p&gt;</source>
        <translation>
            <numerusform>&lt;p&gt;&lt;b&gt;延迟&lt;/b&gt; 中位数 %1 毫秒（最小 %2，最大 %3），共 %n 次迭代&lt;/p&gt;</numerusform>
        </translation>
    </message>
    <message>
        <location filename="../app/gui/RunPanel.cpp" line="513"/>
        <source>&lt;p&gt;&lt;b&gt;Stream&lt;/b&gt; of %1 batches of %2: %3 items/s; a batch&apos;s latency %4 ms (median span in the traced run)%5&lt;/p&gt;</source>
        <translation>&lt;p&gt;&lt;b&gt;流&lt;/b&gt;：%1 个批次，每批 %2：每秒 %3 个条目；单个批次的延迟 %4 ms（记录运行中跨度的中位数）%5&lt;/p&gt;</translation>
    </message>
    <message>
        <location filename="../app/gui/RunPanel.cpp" line="520"/>
        <source>; predicted %1 items/s</source>
        <translation>；预测每秒 %1 个条目</translation>
    </message>
    <message>
        <location filename="../app/gui/RunPanel.cpp" line="527"/>
        <location filename="../app/gui/RunPanel.cpp" line="551"/>
        <source>device</source>
        <translation>设备</translation>
    </message>
    <message>
        <location filename="../app/gui/RunPanel.cpp" line="527"/>
        <source>runs on</source>
        <translation>运行于</translation>
    </message>
    <message>
        <location filename="../app/gui/RunPanel.cpp" line="527"/>
        <source>busy</source>
        <translation>忙碌</translation>
    </message>
    <message>
        <location filename="../app/gui/RunPanel.cpp" line="528"/>
        <source>memory</source>
        <translation>内存</translation>
    </message>
    <message>
        <location filename="../app/gui/RunPanel.cpp" line="544"/>
        <source>&lt;p&gt;&lt;b&gt;Predicted&lt;/b&gt; %1 ms, measured %2 ms; per device, its busy time and its idle time (in a pipeline, its bubble):&lt;/p&gt;</source>
        <translation>&lt;p&gt;&lt;b&gt;预测&lt;/b&gt; %1 ms，实测 %2 ms；每个设备的忙碌时间和空闲时间（在流水线中即其气泡）：&lt;/p&gt;</translation>
    </message>
    <message>
        <location filename="../app/gui/RunPanel.cpp" line="551"/>
        <source>busy, predicted</source>
        <translation>忙碌，预测</translation>
    </message>
    <message>
        <location filename="../app/gui/RunPanel.cpp" line="552"/>
        <location filename="../app/gui/RunPanel.cpp" line="553"/>
        <source>measured</source>
        <translation>实测</translation>
    </message>
    <message>
        <location filename="../app/gui/RunPanel.cpp" line="552"/>
        <source>idle, predicted</source>
        <translation>空闲，预测</translation>
    </message>
    <message>
        <location filename="../app/gui/RunPanel.cpp" line="567"/>
        <source>&lt;p&gt;Optimised: %1&lt;/p&gt;</source>
        <translation>&lt;p&gt;已优化：%1&lt;/p&gt;</translation>
    </message>
    <message>
        <location filename="../app/gui/RunPanel.cpp" line="570"/>
        <source>&lt;p&gt;Note: %1&lt;/p&gt;</source>
        <translation>&lt;p&gt;注意：%1&lt;/p&gt;</translation>
    </message>
    <message>
        <location filename="../app/gui/RunPanel.cpp" line="573"/>
        <source>&lt;p&gt;Outputs match the single-device reference (max abs diff %1).&lt;/p&gt;</source>
        <translation>&lt;p&gt;输出与单设备参考结果一致（最大绝对误差 %1）。&lt;/p&gt;</translation>
    </message>
    <message>
        <location filename="../app/gui/RunPanel.cpp" line="576"/>
        <source>&lt;p style=&apos;color:#b01010&apos;&gt;Outputs differ from the single-device reference: %1&lt;/p&gt;</source>
        <translation>&lt;p style=&apos;color:#b01010&apos;&gt;输出与单设备参考结果不一致：%1&lt;/p&gt;</translation>
    </message>
</context>
<context>
    <name>placer::gui::SplitDialog</name>
    <message>
        <location filename="../app/gui/SplitDialog.cpp" line="21"/>
        <source>Split Across Devices</source>
        <translation>跨设备拆分</translation>
    </message>
    <message numerus="yes">
        <location filename="../app/gui/SplitDialog.cpp" line="27"/>
        <source>Run the %n selected op(s) once per device, each device on its share of the batch. The batch is split where the region starts and concatenated where it ends.</source>
        <translation>
            <numerusform>将选中的 %n 个算子在每个设备上各运行一次，每个设备处理其所占的批次份额。批次在区域开始处拆分，在结束处拼接。</numerusform>
        </translation>
    </message>
    <message>
        <location filename="../app/gui/SplitDialog.cpp" line="33"/>
        <source>Device</source>
        <translation>设备</translation>
    </message>
    <message>
        <location filename="../app/gui/SplitDialog.cpp" line="34"/>
        <source>Share</source>
        <translation>份额</translation>
    </message>
    <message>
        <location filename="../app/gui/SplitDialog.cpp" line="47"/>
        <source>Relative share of the batch&apos;s rows</source>
        <translation>批次行数的相对份额</translation>
    </message>
    <message>
        <location filename="../app/gui/SplitDialog.cpp" line="65"/>
        <source>Split</source>
        <translation>拆分</translation>
    </message>
    <message>
        <location filename="../app/gui/SplitDialog.cpp" line="94"/>
        <source>Choose two devices or more.</source>
        <translation>请选择两个或更多设备。</translation>
    </message>
    <message>
        <location filename="../app/gui/SplitDialog.cpp" line="112"/>
        <source>%1: rows %2–%3</source>
        <translation>%1：第 %2–%3 行</translation>
    </message>
    <message numerus="yes">
        <location filename="../app/gui/SplitDialog.cpp" line="117"/>
        <source>Batch of %1 across %n op(s): %2.</source>
        <translation>
            <numerusform>%n 个算子上批次为 %1：%2。</numerusform>
        </translation>
    </message>
    <message numerus="yes">
        <location filename="../app/gui/SplitDialog.cpp" line="123"/>
        <source>%n conflict(s); the first: %1</source>
        <translation>
            <numerusform>%n 个冲突；第一个：%1</numerusform>
        </translation>
    </message>
</context>
<context>
    <name>placer::gui::WorkspaceController</name>
    <message>
        <location filename="../app/gui/WorkspaceController.cpp" line="49"/>
        <source>Rename plan</source>
        <translation>重命名计划</translation>
    </message>
    <message>
        <location filename="../app/gui/WorkspaceController.cpp" line="49"/>
        <source>New name:</source>
        <translation>新名称：</translation>
    </message>
    <message>
        <location filename="../app/gui/WorkspaceController.cpp" line="57"/>
        <source>Duplicate plan</source>
        <translation>复制计划</translation>
    </message>
    <message>
        <location filename="../app/gui/WorkspaceController.cpp" line="57"/>
        <source>Name of the copy:</source>
        <translation>副本名称：</translation>
    </message>
    <message>
        <location filename="../app/gui/WorkspaceController.cpp" line="58"/>
        <source> copy</source>
        <translation> 副本</translation>
    </message>
    <message>
        <location filename="../app/gui/WorkspaceController.cpp" line="63"/>
        <source>Delete plan</source>
        <translation>删除计划</translation>
    </message>
    <message>
        <location filename="../app/gui/WorkspaceController.cpp" line="64"/>
        <source>Delete the plan &apos;%1&apos; and its runs?</source>
        <translation>删除计划“%1”及其运行记录？</translation>
    </message>
    <message>
        <location filename="../app/gui/WorkspaceController.cpp" line="70"/>
        <source>Compare plans</source>
        <translation>比较计划</translation>
    </message>
    <message>
        <location filename="../app/gui/WorkspaceController.cpp" line="94"/>
        <location filename="../app/gui/WorkspaceController.cpp" line="116"/>
        <source>Cannot keep a draft of the unsaved changes</source>
        <translation>无法保存未保存更改的草稿</translation>
    </message>
    <message>
        <location filename="../app/gui/WorkspaceController.cpp" line="145"/>
        <source>Cannot drop the draft of the unsaved changes</source>
        <translation>无法删除未保存更改的草稿</translation>
    </message>
    <message>
        <location filename="../app/gui/WorkspaceController.cpp" line="168"/>
        <source>Unsaved changes</source>
        <translation>未保存的更改</translation>
    </message>
    <message>
        <location filename="../app/gui/WorkspaceController.cpp" line="166"/>
        <source>Restore the unsaved changes to %1 from %2?</source>
        <translation>恢复 %2 时对 %1 所做的未保存更改？</translation>
    </message>
    <message>
        <location filename="../app/gui/WorkspaceController.cpp" line="164"/>
        <source>Restore the unsaved plan of %1 from %2?</source>
        <translation>恢复 %2 时 %1 的未保存计划？</translation>
    </message>
    <message numerus="yes">
        <location filename="../app/gui/WorkspaceController.cpp" line="172"/>
        <source>Placement Explorer did not close cleanly; these changes were kept as a draft in the workspace (%1 on %2, %n cop(ies)).</source>
        <translation>
            <numerusform>Placement Explorer 未正常关闭；这些更改已作为草稿保存在工作区中（%1 位于 %2，%n 次复制）。</numerusform>
        </translation>
    </message>
    <message>
        <location filename="../app/gui/WorkspaceController.cpp" line="176"/>
        <source>Restore</source>
        <translation>恢复</translation>
    </message>
    <message>
        <location filename="../app/gui/WorkspaceController.cpp" line="177"/>
        <source>Discard</source>
        <translation>放弃</translation>
    </message>
    <message>
        <location filename="../app/gui/WorkspaceController.cpp" line="182"/>
        <source>Cannot discard the draft</source>
        <translation>无法放弃草稿</translation>
    </message>
    <message>
        <location filename="../app/gui/WorkspaceController.cpp" line="188"/>
        <source>Cannot restore the draft</source>
        <translation>无法恢复草稿</translation>
    </message>
    <message>
        <location filename="../app/gui/WorkspaceController.cpp" line="200"/>
        <source>Cannot take over the draft</source>
        <translation>无法接管草稿</translation>
    </message>
    <message>
        <location filename="../app/gui/WorkspaceController.cpp" line="232"/>
        <source>Workspace: %1 (read-only; unsaved changes kept in %2)</source>
        <translation>工作区：%1（只读；未保存的更改保存在 %2）</translation>
    </message>
    <message>
        <location filename="../app/gui/WorkspaceController.cpp" line="233"/>
        <source>nowhere</source>
        <translation>无处</translation>
    </message>
    <message>
        <location filename="../app/gui/WorkspaceController.cpp" line="234"/>
        <source>The workspace is read-only</source>
        <translation>工作区为只读</translation>
    </message>
    <message>
        <location filename="../app/gui/WorkspaceController.cpp" line="236"/>
        <source>%1 cannot be written: its plans can be opened, but saving them fails. Unsaved changes are kept as drafts in the temporary workspace %2; open another workspace (File ▸ Open Workspace) to save.</source>
        <translation>%1 无法写入：其中的计划可以打开，但无法保存。未保存的更改作为草稿保存在临时工作区 %2 中；要保存，请打开另一个工作区（文件 ▸ 打开工作区）。</translation>
    </message>
    <message>
        <location filename="../app/gui/WorkspaceController.cpp" line="241"/>
        <source>%1 cannot be written, and no temporary workspace could be made for drafts (%2): unsaved changes are not kept.</source>
        <translation>%1 无法写入，且无法为草稿创建临时工作区（%2）：未保存的更改不会被保留。</translation>
    </message>
    <message>
        <location filename="../app/gui/WorkspaceController.cpp" line="245"/>
        <source>Workspace: %1</source>
        <translation>工作区：%1</translation>
    </message>
    <message>
        <location filename="../app/gui/WorkspaceController.cpp" line="254"/>
        <location filename="../app/gui/WorkspaceController.cpp" line="263"/>
        <source>Cannot save the plan</source>
        <translation>无法保存计划</translation>
    </message>
    <message>
        <location filename="../app/gui/WorkspaceController.cpp" line="255"/>
        <source>No workspace is open (File ▸ Open Workspace).</source>
        <translation>没有打开的工作区（文件 ▸ 打开工作区）。</translation>
    </message>
    <message>
        <location filename="../app/gui/WorkspaceController.cpp" line="281"/>
        <source>Save plan</source>
        <translation>保存计划</translation>
    </message>
    <message>
        <location filename="../app/gui/WorkspaceController.cpp" line="281"/>
        <source>Plan name:</source>
        <translation>计划名称：</translation>
    </message>
    <message>
        <location filename="../app/gui/WorkspaceController.cpp" line="291"/>
        <source>Workspace</source>
        <translation>工作区</translation>
    </message>
    <message>
        <location filename="../app/gui/WorkspaceController.cpp" line="291"/>
        <source>Workspaces (*.db);;All files (*)</source>
        <translation>工作区 (*.db);;所有文件 (*)</translation>
    </message>
    <message>
        <location filename="../app/gui/WorkspaceController.cpp" line="302"/>
        <source>Cannot open the plan</source>
        <translation>无法打开计划</translation>
    </message>
    <message>
        <location filename="../app/gui/WorkspaceController.cpp" line="307"/>
        <source>plan %1</source>
        <translation>计划 %1</translation>
    </message>
    <message>
        <location filename="../app/gui/WorkspaceController.cpp" line="317"/>
        <source>The planner answers differently now</source>
        <translation>规划器现在给出不同的结果</translation>
    </message>
    <message>
        <location filename="../app/gui/WorkspaceController.cpp" line="318"/>
        <source>Since &apos;%1&apos; was saved, the planner&apos;s answer changed:
%2</source>
        <translation>自“%1”保存以来，规划器的结果发生了变化：
%2</translation>
    </message>
    <message>
        <location filename="../app/gui/WorkspaceController.cpp" line="328"/>
        <source>Cannot rename the plan</source>
        <translation>无法重命名计划</translation>
    </message>
    <message>
        <location filename="../app/gui/WorkspaceController.cpp" line="344"/>
        <source>Cannot duplicate the plan</source>
        <translation>无法复制计划</translation>
    </message>
    <message>
        <location filename="../app/gui/WorkspaceController.cpp" line="357"/>
        <source>Cannot delete the plan</source>
        <translation>无法删除计划</translation>
    </message>
    <message>
        <location filename="../app/gui/WorkspaceController.cpp" line="374"/>
        <source>&lt;h3&gt;%1 → %2&lt;/h3&gt;</source>
        <translation>&lt;h3&gt;%1 → %2&lt;/h3&gt;</translation>
    </message>
    <message numerus="yes">
        <location filename="../app/gui/WorkspaceController.cpp" line="375"/>
        <source>&lt;p&gt;%n node(s) moved; </source>
        <translation>
            <numerusform>&lt;p&gt;移动了 %n 个节点；</numerusform>
        </translation>
    </message>
    <message>
        <location filename="../app/gui/WorkspaceController.cpp" line="376"/>
        <source>copies: %1 added, %2 removed; bytes copied %3 → %4.&lt;/p&gt;</source>
        <translation>拷贝：新增 %1，移除 %2；拷贝字节 %3 → %4。&lt;/p&gt;</translation>
    </message>
    <message>
        <location filename="../app/gui/WorkspaceController.cpp" line="385"/>
        <source>&lt;p&gt;Last runs: %1 ms → %2 ms (%3 on %4, %5 on %6)&lt;/p&gt;</source>
        <translation>&lt;p&gt;最近运行：%1 毫秒 → %2 毫秒（%3 在 %4，%5 在 %6）&lt;/p&gt;</translation>
    </message>
    <message>
        <location filename="../app/gui/WorkspaceController.cpp" line="392"/>
        <source> ms</source>
        <translation> ms</translation>
    </message>
    <message>
        <location filename="../app/gui/WorkspaceController.cpp" line="392"/>
        <source>none</source>
        <translation>无</translation>
    </message>
    <message>
        <location filename="../app/gui/WorkspaceController.cpp" line="394"/>
        <source>&lt;p&gt;Predicted: %1 → %2; measured: %3 ms → %4 ms&lt;/p&gt;</source>
        <translation>&lt;p&gt;预测：%1 → %2；实测：%3 ms → %4 ms&lt;/p&gt;</translation>
    </message>
    <message>
        <location filename="../app/gui/WorkspaceController.cpp" line="400"/>
        <source>&lt;p&gt;&lt;b&gt;Largest changes in node time&lt;/b&gt;&lt;br&gt;</source>
        <translation>&lt;p&gt;&lt;b&gt;节点耗时变化最大的&lt;/b&gt;&lt;br&gt;</translation>
    </message>
    <message>
        <location filename="../app/gui/WorkspaceController.cpp" line="409"/>
        <source>&lt;p&gt;Run both plans to compare their latency.&lt;/p&gt;</source>
        <translation>&lt;p&gt;运行两个计划以比较其延迟。&lt;/p&gt;</translation>
    </message>
    <message>
        <location filename="../app/gui/WorkspaceController.cpp" line="418"/>
        <source>… and %1 more</source>
        <translation>……还有 %1 项</translation>
    </message>
    <message>
        <location filename="../app/gui/WorkspaceController.cpp" line="421"/>
        <source>Moved</source>
        <translation>已移动</translation>
    </message>
    <message>
        <location filename="../app/gui/WorkspaceController.cpp" line="422"/>
        <source>Copies added</source>
        <translation>新增拷贝</translation>
    </message>
    <message>
        <location filename="../app/gui/WorkspaceController.cpp" line="423"/>
        <source>Copies removed</source>
        <translation>移除的拷贝</translation>
    </message>
    <message>
        <location filename="../app/gui/WorkspaceController.cpp" line="432"/>
        <source>Cannot keep the run&apos;s node times</source>
        <translation>无法保存本次运行的节点时间</translation>
    </message>
    <message>
        <location filename="../app/gui/WorkspaceController.cpp" line="438"/>
        <source>Cannot record the run</source>
        <translation>无法记录此次运行</translation>
    </message>
</context>
<context>
    <name>placer::views::ConflictsPanel</name>
    <message>
        <location filename="../views/ConflictsPanel.cpp" line="33"/>
        <source>No conflicts.</source>
        <translation>没有冲突。</translation>
    </message>
    <message>
        <location filename="../views/ConflictsPanel.cpp" line="36"/>
        <source>Note: %1</source>
        <translation>说明：%1</translation>
    </message>
</context>
<context>
    <name>placer::views::DeviceChip</name>
    <message>
        <location filename="../views/DevicePalette.cpp" line="31"/>
        <source>Drag onto a node, or onto a selected node to place the whole selection, to run it on %1</source>
        <translation>拖到一个节点上（或拖到已选中的节点上以放置整个选区），使其在 %1 上运行</translation>
    </message>
</context>
<context>
    <name>placer::views::DevicePalette</name>
    <message>
        <location filename="../views/DevicePalette.cpp" line="129"/>
        <source>default</source>
        <translation>默认</translation>
    </message>
    <message>
        <location filename="../views/DevicePalette.cpp" line="131"/>
        <source>host</source>
        <translation>主机</translation>
    </message>
    <message numerus="yes">
        <location filename="../views/DevicePalette.cpp" line="141"/>
        <source>%n node(s)</source>
        <translation>
            <numerusform>%n 个节点</numerusform>
        </translation>
    </message>
</context>
<context>
    <name>placer::views::GraphScene</name>
    <message>
        <location filename="../views/GraphScene.cpp" line="394"/>
        <source>Runs as one op on its device; body collapsed:</source>
        <translation>作为一个算子在其设备上运行；主体已折叠：</translation>
    </message>
    <message>
        <location filename="../views/GraphScene.cpp" line="568"/>
        <source>size at run time</source>
        <translation>运行时大小</translation>
    </message>
</context>
<context>
    <name>placer::views::HintBar</name>
    <message>
        <location filename="../views/HintBar.cpp" line="23"/>
        <source>Hide this hint</source>
        <translation>隐藏此提示</translation>
    </message>
</context>
<context>
    <name>placer::views::LayoutController</name>
    <message>
        <location filename="../views/LayoutController.cpp" line="25"/>
        <source>Cancel layout</source>
        <translation>取消布局</translation>
    </message>
    <message>
        <location filename="../views/LayoutController.cpp" line="28"/>
        <source>laying out</source>
        <translation>正在布局</translation>
    </message>
    <message numerus="yes">
        <location filename="../views/LayoutController.cpp" line="55"/>
        <source>%n name scope(s) shown collapsed: double-click a group to open it; Find opens the groups a node is in</source>
        <translation>
            <numerusform>%n 个名称作用域已折叠显示：双击分组可展开；查找会展开节点所在的分组</numerusform>
        </translation>
    </message>
    <message numerus="yes">
        <location filename="../views/LayoutController.cpp" line="73"/>
        <source>Showing a quick layout while Graphviz lays out %n node(s)…</source>
        <translation>
            <numerusform>Graphviz 正在布局 %n 个节点，先显示快速布局…</numerusform>
        </translation>
    </message>
    <message>
        <location filename="../views/LayoutController.cpp" line="139"/>
        <source>Layout failed (%1); showing a simple ranked layout</source>
        <translation>布局失败（%1）；显示简单的分层布局</translation>
    </message>
    <message>
        <location filename="../views/LayoutController.cpp" line="142"/>
        <source>Laid out in %1 s (%2 of %3 levels; the others were kept from before)</source>
        <translation>布局用时 %1 秒（%3 层中的 %2 层；其余沿用之前的布局）</translation>
    </message>
    <message>
        <location filename="../views/LayoutController.cpp" line="148"/>
        <source>Laid out in %1 s</source>
        <translation>布局用时 %1 秒</translation>
    </message>
    <message>
        <location filename="../views/LayoutController.cpp" line="184"/>
        <source>Layout cancelled; showing a simple ranked layout</source>
        <translation>布局已取消；显示简单的分层布局</translation>
    </message>
</context>
<context>
    <name>placer::views::ModeBox</name>
    <message>
        <location filename="../views/ModeBox.cpp" line="10"/>
        <source>demand</source>
        <translation>demand</translation>
    </message>
    <message>
        <location filename="../views/ModeBox.cpp" line="11"/>
        <source>unify (TVM)</source>
        <translation>unify (TVM)</translation>
    </message>
    <message>
        <location filename="../views/ModeBox.cpp" line="12"/>
        <source>auto-place</source>
        <translation>自动放置</translation>
    </message>
    <message>
        <location filename="../views/ModeBox.cpp" line="13"/>
        <source>demand: unpinned nodes go where their consumers are; unify: nodes joined by hard edges share a device, as in TVM; auto-place: unpinned ops go where the cost model predicts the shortest latency, pins and rules kept</source>
        <translation>demand：未固定的节点放在其使用者所在处；unify：由硬边相连的节点共享设备，与 TVM 相同；自动放置：未固定的算子放在代价模型预测延迟最短的设备上，保留固定和规则</translation>
    </message>
</context>
<context>
    <name>placer::views::PlacementDocument</name>
    <message>
        <location filename="../views/PlacementDocument.cpp" line="211"/>
        <source>&apos;%1&apos; cannot be removed: device_copy %2 in the model names it</source>
        <translation>无法删除“%1”：模型中的 device_copy %2 引用了它</translation>
    </message>
    <message>
        <location filename="../views/PlacementDocument.cpp" line="220"/>
        <source>&apos;%1&apos; cannot be removed: a result of the model must be on it</source>
        <translation>无法删除“%1”：模型的一个结果必须位于该设备</translation>
    </message>
    <message>
        <location filename="../views/PlacementDocument.cpp" line="230"/>
        <source>devices named by device_copy nodes must keep their place in the list</source>
        <translation>被 device_copy 节点引用的设备必须保持其在列表中的位置</translation>
    </message>
    <message>
        <location filename="../views/PlacementDocument.cpp" line="237"/>
        <source>devices that results must be on must keep their place in the list</source>
        <translation>结果所在的设备必须保持其在列表中的位置</translation>
    </message>
</context>
<context>
    <name>placer::views::PropertiesPanel</name>
    <message>
        <location filename="../views/PropertiesPanel.cpp" line="34"/>
        <source>&lt;i&gt;Select a node to see its properties and why it runs where it does.&lt;/i&gt;</source>
        <translation>&lt;i&gt;选择一个节点以查看其属性以及它为何在该设备上运行。&lt;/i&gt;</translation>
    </message>
    <message numerus="yes">
        <location filename="../views/PropertiesPanel.cpp" line="36"/>
        <source>%n node(s) selected.</source>
        <translation>
            <numerusform>已选择 %n 个节点。</numerusform>
        </translation>
    </message>
    <message>
        <location filename="../views/PropertiesPanel.cpp" line="54"/>
        <source>Devices:</source>
        <translation>设备：</translation>
    </message>
    <message>
        <location filename="../views/PropertiesPanel.cpp" line="55"/>
        <source>Shards:</source>
        <translation>分片：</translation>
    </message>
    <message>
        <location filename="../views/PropertiesPanel.cpp" line="59"/>
        <source>%1: rows %2–%3 of %4</source>
        <translation>%1：第 %2–%3 行（共 %4 行）</translation>
    </message>
    <message>
        <location filename="../views/PropertiesPanel.cpp" line="68"/>
        <source>, predicted %1</source>
        <translation>，预测 %1</translation>
    </message>
    <message>
        <location filename="../views/PropertiesPanel.cpp" line="75"/>
        <source>Device:</source>
        <translation>设备：</translation>
    </message>
    <message>
        <location filename="../views/PropertiesPanel.cpp" line="75"/>
        <source>none</source>
        <translation>无</translation>
    </message>
    <message>
        <location filename="../views/PropertiesPanel.cpp" line="78"/>
        <source>Why:</source>
        <translation>原因：</translation>
    </message>
    <message numerus="yes">
        <location filename="../views/PropertiesPanel.cpp" line="86"/>
        <source>… %n more</source>
        <translation>
            <numerusform>……另外 %n 个</numerusform>
        </translation>
    </message>
    <message>
        <location filename="../views/PropertiesPanel.cpp" line="94"/>
        <source>Decided by:</source>
        <translation>决定来源：</translation>
    </message>
    <message>
        <location filename="../views/PropertiesPanel.cpp" line="98"/>
        <source>Pinned:</source>
        <translation>固定于：</translation>
    </message>
    <message>
        <location filename="../views/PropertiesPanel.cpp" line="103"/>
        <source>Predicted:</source>
        <translation>预测：</translation>
    </message>
    <message>
        <location filename="../views/PropertiesPanel.cpp" line="103"/>
        <source>from</source>
        <translation>从</translation>
    </message>
    <message>
        <location filename="../views/PropertiesPanel.cpp" line="106"/>
        <source> (from earlier runs)</source>
        <translation>（来自之前的运行）</translation>
    </message>
    <message>
        <location filename="../views/PropertiesPanel.cpp" line="107"/>
        <source> (roofline estimate)</source>
        <translation>（Roofline 估计）</translation>
    </message>
    <message>
        <location filename="../views/PropertiesPanel.cpp" line="109"/>
        <source>Inputs:</source>
        <translation>输入：</translation>
    </message>
    <message>
        <location filename="../views/PropertiesPanel.cpp" line="114"/>
        <source>Outputs:</source>
        <translation>输出：</translation>
    </message>
    <message>
        <location filename="../views/PropertiesPanel.cpp" line="121"/>
        <source>Bodies (collapsed; they run on this node&apos;s device):</source>
        <translation>主体（已折叠；在此节点的设备上运行）：</translation>
    </message>
    <message>
        <location filename="../views/PropertiesPanel.cpp" line="128"/>
        <source>Attributes:</source>
        <translation>属性：</translation>
    </message>
</context>
<context>
    <name>placer::views::RulesPanel</name>
    <message>
        <location filename="../views/RulesPanel.cpp" line="21"/>
        <source>Apply rules</source>
        <translation>应用规则</translation>
    </message>
    <message>
        <location filename="../views/RulesPanel.cpp" line="25"/>
        <source>Op-name rules, one OP=DEVICE a line (globs, first match wins):</source>
        <translation>按算子名的规则，每行一个 OP=DEVICE（通配符，首个匹配生效）：</translation>
    </message>
    <message>
        <location filename="../views/RulesPanel.cpp" line="29"/>
        <source>Fallback device:</source>
        <translation>后备设备：</translation>
    </message>
    <message>
        <location filename="../views/RulesPanel.cpp" line="64"/>
        <source>(none)</source>
        <translation>（无）</translation>
    </message>
    <message>
        <location filename="../views/RulesPanel.cpp" line="89"/>
        <source>&apos;%1&apos; is not of the form OP=DEVICE</source>
        <translation>“%1”不是 OP=DEVICE 的形式</translation>
    </message>
    <message>
        <location filename="../views/RulesPanel.cpp" line="96"/>
        <source>&apos;%1&apos; names unknown device &apos;%2&apos;</source>
        <translation>“%1”引用了未知设备“%2”</translation>
    </message>
</context>
<context>
    <name>placer::views::TimelineWidget</name>
    <message>
        <location filename="../views/TimelineWidget.cpp" line="102"/>
        <source>Run the plan (Run ▸ Run) to see when each device works.</source>
        <translation>运行计划（运行 ▸ 运行）以查看每个设备何时工作。</translation>
    </message>
</context>
</TS>
